"""A synthetic English corpus of labelled two-party task dialogues, generated from tables.

Written to a file by `python -m data_prep.make_demo_corpus`; read directly by the demo and the
benchmarks. The demo has to train every method and evaluate domain clustering, dialogue retrieval and
intent-based semantic retrieval (SR) without downloading a corpus, so this module writes one from
tables: 8 domains (hotel, restaurant, taxi, train, weather, shopping, tech_support, banking), each
with one to three tasks whose flow runs through greeting, the request, slot questions and answers,
the agent's proposal, the user's confirmation or rejection, follow-up questions and closing.

- Speakers are "user" and "agent"; every turn has the field "intent" (e.g. "book_hotel",
  "ask_date", "inform_date", "confirm") and every dialogue the labels {"domain": name}.
- Greeting, slot, confirmation and closing intents are shared across domains, so retrieval by
  intent does not reduce to retrieval by domain; shared intents also have domain wordings.
- Surface variety: at least 5 paraphrases per intent, slot values kept consistent within a
  dialogue (names, dates, times, places, numbers, products), optional politeness, and typos,
  lower-casing or texting shorthand in a minority of user turns.
- Some dialogues have two consecutive turns of one speaker (a greeting before the request, the
  agent's "let me check", a rejection followed by the corrected detail), as real corpora do and
  `merge_consecutive_turns` expects.
- 4 to 14 turns; ids "demo-000001", ...; domains come in shuffled blocks so counts are balanced.

The output depends only on (number of dialogues, seed), through one `random.Random(seed)`; a
shorter corpus is a prefix of a longer one with the same seed.
"""
import dataclasses
import functools
import random
import re
import string
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

from tfdialemb.dialogue import Dialogue, Turn

MIN_TURNS, MAX_TURNS = 4, 14
USER, AGENT = "user", "agent"
POLITENESS_RATE = 0.2
NOISE_RATE = 0.15
HOLD_RATE = 0.3
# How a dialogue may open before the request (name, turns), and how often each does.
OPENINGS = (("agent_opens", 1), ("greeting_exchange", 2), ("user_greets", 1))
OPENING_WEIGHTS = (0.45, 0.4, 0.15)


@dataclasses.dataclass(frozen=True)
class Task:
    """One thing a user can want in a domain and the intents that get it done.

    The agent asks for some of the `slots` the request did not mention (intents ask_<slot> /
    inform_<slot>), always for the `required` ones, then makes its `proposal`. When `accept` is
    set the user accepts it, or first rejects it with `reject` and changes one of
    `corrections`, and the agent proposes again with fresh `offered` values; `done` is the
    agent's closing of the task. `questions` are (user question, agent answer) intents.
    """
    request: str
    slots: Tuple[str, ...]
    proposal: str
    offered: Tuple[str, ...] = ()
    required: Tuple[str, ...] = ()
    corrections: Tuple[str, ...] = ()
    accept: Optional[str] = "confirm"
    reject: str = "deny"
    done: Optional[str] = None
    questions: Tuple[Tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class Domain:
    """A domain label and the tasks its dialogues are about."""
    name: str
    tasks: Tuple[Task, ...]


DOMAINS = (
    Domain("hotel", (
        Task("book_hotel", ("date", "nights", "people", "area", "price_range", "name"),
             "offer_hotel", offered=("hotel", "price", "stars"),
             corrections=("date", "nights", "people", "area", "price_range"), done="booking_done",
             questions=(("ask_price", "inform_price"), ("ask_parking", "inform_parking"),
                        ("ask_address", "inform_address"))),
    )),
    Domain("restaurant", (
        Task("book_restaurant", ("cuisine", "area", "people", "date", "time", "name"),
             "offer_restaurant", offered=("restaurant",),
             corrections=("cuisine", "area", "people", "date", "time"), done="booking_done",
             questions=(("ask_address", "inform_address"), ("ask_phone", "inform_phone"),
                        ("ask_price", "inform_price"))),
    )),
    Domain("taxi", (
        Task("book_taxi", ("origin", "destination", "time", "people"),
             "offer_taxi", offered=("car", "price"),
             corrections=("origin", "destination", "time", "people"), done="booking_done",
             questions=(("ask_price", "inform_price"), ("ask_phone", "inform_phone"),
                        ("ask_duration", "inform_duration"))),
    )),
    Domain("train", (
        Task("book_train", ("origin", "destination", "date", "time", "people"),
             "offer_train", offered=("train_id", "price", "arrival"), required=("destination",),
             corrections=("date", "time", "people"), done="booking_done",
             questions=(("ask_price", "inform_price"), ("ask_duration", "inform_duration"))),
    )),
    Domain("weather", (
        Task("ask_weather", ("city", "date"), "inform_weather", accept=None,
             questions=(("ask_rain", "inform_rain"), ("ask_temperature", "inform_temperature"))),
    )),
    Domain("shopping", (
        Task("track_order", ("order_id", "name"), "inform_order_status", accept=None,
             required=("order_id",),
             questions=(("ask_delivery_date", "inform_delivery_date"),)),
        Task("return_item", ("order_id", "product", "reason"), "offer_refund",
             offered=("amount",), corrections=("product",), done="request_done",
             questions=(("ask_refund_time", "inform_refund_time"),)),
    )),
    Domain("tech_support", (
        Task("report_problem", ("device", "system", "error"), "suggest_fix", offered=("fix",),
             accept="problem_solved", reject="problem_persists", done="resolved",
             corrections=("error",),
             questions=(("ask_warranty", "inform_warranty"),)),
    )),
    Domain("banking", (
        Task("check_balance", ("account", "name"), "inform_balance", accept=None,
             questions=(("ask_transactions", "inform_transactions"),)),
        Task("transfer_money", ("amount", "recipient", "account", "date"), "confirm_transfer",
             required=("amount", "recipient"),
             corrections=("amount", "recipient", "date"), done="request_done",
             questions=(("ask_fee", "inform_fee"), ("ask_duration", "inform_duration"))),
        Task("block_card", ("card_digits", "name"), "confirm_card_block", required=("card_digits",),
             corrections=("card_digits",), done="request_done",
             questions=(("ask_new_card", "inform_new_card"),)),
    )),
)

# Paraphrases by intent, worded to fit every domain that uses the intent. A rendered utterance
# gets its first letter capitalised, so a template may start with a slot.
TEMPLATES: Dict[str, Tuple[str, ...]] = {
    # Openings and closings, shared by all domains.
    "greet": ("Hi.", "Hello there.", "Hi, good morning.", "Hey!", "Good afternoon.", "Hello!",
              "Hi there, hope you're well.", "Hi, I hope you can help me.", "Good evening.",
              "Hello, good morning.", "Hey there.", "Morning!", "Hi, this is {name}.",
              "Hello, my name is {name}."),
    "offer_help": ("Hello, how can I help you today?", "Hi! What can I do for you?",
                   "Good day, how may I assist you?", "Welcome! How can I help?",
                   "Hi there, what do you need today?",
                   "Hello, thanks for getting in touch. What can I do for you?"),
    "thank": ("Thank you so much.", "Thanks!", "Great, thanks for your help.", "Thanks a lot.",
              "Perfect, thank you.", "That's very helpful, thanks.", "Cheers, I appreciate it.",
              "Thank you, that's great.", "Awesome, thanks!", "Many thanks.",
              "Brilliant, thank you very much.", "Thanks, you've been very helpful.",
              "Wonderful, thanks so much.", "Okay, thank you.", "Great, thank you!"),
    "welcome": ("You're welcome!", "My pleasure.", "Happy to help.", "No problem at all.",
                "Glad I could help.", "Anytime!"),
    "goodbye": ("Goodbye!", "Bye, have a nice day.", "Have a great day, goodbye.",
                "Take care, bye!", "See you, bye.", "Have a good one!", "Bye!", "Bye for now.",
                "Cheers, bye.", "All the best, bye.", "Talk to you later, bye."),
    "ask_more": ("Is there anything else I can help you with?", "Anything else?",
                 "Can I help with anything else today?", "Is there something else you need?",
                 "Do you need anything else?"),
    "no_more": ("No, that's all.", "Nope, that's everything.", "No thanks, that's it.",
                "That's all for now.", "No, I'm all set.", "No, that's everything, thanks.",
                "Nothing else, thank you.", "I think that's it.", "No, you've covered it all.",
                "Not today, thanks."),
    "hold": ("One moment, please.", "Let me check that for you.",
             "Just a second while I look that up.", "Please hold on a moment.",
             "Give me a moment to check.", "Let me see what I can find."),
    "confirm": ("Yes, that's right.", "Yes, please.", "That sounds good.", "Perfect, go ahead.",
                "Yes, that works for me.", "Correct.", "Sure, let's do that.", "Yes, let's do it.",
                "Great, let's go with that.", "Yes, exactly.", "That's perfect.",
                "Okay, sounds great.", "Yes, do it.", "Alright, go for it.", "Yep, that's fine."),
    "deny": ("No, that's not quite right.", "Hmm, no.", "No, I don't think so.",
             "That doesn't work for me.", "Actually, no.", "No, sorry."),
    "booking_done": ("Done! Your reference number is {reference}.",
                     "You're all booked. The reference is {reference}.",
                     "I've made the booking, reference {reference}.",
                     "Booking confirmed. Please note your reference: {reference}.",
                     "All set, your confirmation code is {reference}."),
    "request_done": ("That's done. Your reference number is {reference}.",
                     "All processed, the reference is {reference}.",
                     "I've taken care of it. Reference: {reference}.",
                     "Everything is done, and your case number is {reference}.",
                     "Completed. You'll get a confirmation email with reference {reference}."),
    # Slot questions and answers, each shared by two or more domains or tasks.
    "ask_date": ("What date would you like?", "Which day?", "For what date?",
                 "What day works for you?", "And on which date?"),
    "inform_date": ("{date}, please.", "{date} would be great.", "It's for {date}.",
                    "I was thinking {date}.", "Let's say {date}.", "{date} works best for me."),
    "ask_time": ("What time?", "At what time?", "What time would suit you?",
                 "What time should I put down?", "And the time?"),
    "inform_time": ("At {time}, please.", "{time} would be ideal.", "Around {time}.",
                    "Let's say {time}.", "{time}, if possible.", "Could we do {time}?"),
    "ask_people": ("How many people?", "For how many guests?", "How many of you will there be?",
                   "And how many people is that for?", "How many in your party?"),
    "inform_people": ("{people} people.", "For {people}, please.", "There will be {people} of us.",
                      "It's for {people} people.", "We are {people}.", "Just {people} of us."),
    "ask_name": ("Can I have your name, please?", "Could I get your full name?", "And your name?",
                 "May I have your name?", "Who am I speaking with?"),
    "inform_name": ("It's {name}.", "{name}.", "My name is {name}.", "The name is {name}.",
                    "Sure, it's {name}.", "This is {name}."),
    "ask_area": ("Which part of town?", "Any preferred area?",
                 "Where in the city would you like it?", "Do you have an area in mind?",
                 "Which area do you prefer?"),
    "inform_area": ("Somewhere in {area}.", "{area} would be nice.", "Preferably {area}.",
                    "I'd like {area}.", "In {area}, please.", "Anywhere in {area} is fine."),
    "ask_origin": ("Where are you leaving from?", "Where will you be departing from?",
                   "What's your starting point?", "Where from?", "Where are you starting?"),
    "inform_origin": ("From {origin}.", "I'm leaving from {origin}.", "{origin}.",
                      "Starting at {origin}.", "I'll be at {origin}."),
    "ask_destination": ("Where are you going?", "And where to?", "What's your destination?",
                        "Where would you like to go?", "Where are you headed?"),
    "inform_destination": ("To {destination}.", "I'm going to {destination}.",
                           "{destination}, please.", "I need to get to {destination}.",
                           "Heading to {destination}."),
    "ask_price": ("How much is it?", "What's the price?", "How much will that cost?",
                  "What does it cost?", "Is it expensive?"),
    "inform_price": ("It's {price}.", "That comes to {price}.", "The price is {price}.",
                     "It costs {price}.", "{price} in total."),
    "ask_address": ("What's the address?", "Where exactly is it?", "Could you give me the address?",
                    "Where is it located?", "Can you tell me where it is?"),
    "inform_address": ("It's at {address}.", "The address is {address}.",
                       "You'll find it at {address}.", "{address}.", "It's located at {address}."),
    "ask_phone": ("What's their phone number?", "Can I get a contact number?",
                  "Do you have a phone number?", "How can I reach them?",
                  "Is there a number I can call?"),
    "inform_phone": ("The number is {phone}.", "You can call them on {phone}.", "It's {phone}.",
                     "Their phone number is {phone}.", "Sure, {phone}."),
    "ask_duration": ("How long does it take?", "How long is the trip?", "What's the travel time?",
                     "How long will it take?", "How long until it gets there?"),
    "inform_duration": ("About {duration}.", "It takes {duration}.", "Roughly {duration}.",
                        "Usually {duration}.", "Around {duration}, more or less."),
    "ask_order_id": ("Could you give me your order number?", "What's the order number?",
                     "Do you have the order number handy?", "Can I have the order ID, please?",
                     "Which order is it about?"),
    "inform_order_id": ("It's {order_id}.", "The order number is {order_id}.", "Order {order_id}.",
                        "Sure, {order_id}.", "Here it is: {order_id}."),
    "ask_amount": ("How much?", "What amount?", "How much should it be?", "What's the amount?",
                   "And how much is it?"),
    "inform_amount": ("{amount}.", "{amount}, please.", "It's {amount}.", "Exactly {amount}.",
                      "The amount is {amount}."),
    # Hotel.
    "book_hotel": ("I need a hotel room.", "I'd like to book a hotel in {city}.",
                   "Can you help me find a place to stay?",
                   "I'm looking for accommodation in {city}.", "I want to reserve a room.",
                   "Do you have any rooms available?", "We need somewhere to stay in {city}.",
                   "I need a hotel room for {nights}.", "Can I book a room for {people} people?",
                   "I'm looking for a hotel in {area}.",
                   "I'd like a room from {date} for {nights}.",
                   "Is there anything {price_range} to stay in {city}?"),
    "ask_nights": ("How many nights?", "How long will you be staying?", "For how many nights?",
                   "How many nights would you like?", "And how long is the stay?"),
    "inform_nights": ("{nights}.", "For {nights}.", "I'll stay {nights}.", "{nights}, please.",
                      "Just {nights}."),
    "ask_price_range": ("What's your budget?", "What price range are you looking for?",
                        "Any price range in mind?", "How much would you like to spend?",
                        "Cheap, moderate, or something more upscale?"),
    "inform_price_range": ("Something {price_range}, please.", "{price_range} is fine.",
                           "I'm looking for something {price_range}.", "Preferably {price_range}.",
                           "Anything {price_range}."),
    "offer_hotel": ("I found {hotel} in {area}, it's {price} a night. Shall I book it?",
                    "How about {hotel}? It's {price} per night.",
                    "{hotel} has rooms available for {price} a night. Would that work?",
                    "I'd recommend {hotel}, a {stars}-star hotel at {price} per night.",
                    "There's a room at {hotel} for {price} per night. Should I reserve it?"),
    "ask_parking": ("Is there parking?", "Do they have free parking?", "Can I park there?",
                    "Is parking included?", "Will I be able to park my car?"),
    "inform_parking": ("Yes, there is free parking on site.",
                       "Parking is available for {parking_fee} a day.",
                       "There's a public car park right next to it.", "Yes, parking is included.",
                       "Unfortunately there's no parking, but there is a garage nearby."),
    # Restaurant.
    "book_restaurant": ("I'd like to book a table.", "Can you find me a restaurant?",
                        "I'm looking for a good place to eat.",
                        "Could you reserve a table for dinner?",
                        "I want to make a restaurant reservation.",
                        "We're looking for somewhere nice to have dinner.",
                        "Can I book a table somewhere?", "I'd like to book a table for {people}.",
                        "Can you find me somewhere that serves {cuisine} food?",
                        "I'm craving {cuisine} food.", "Could you reserve a table in {area}?",
                        "I need a table for {date}.", "Is there a good {cuisine} place in {area}?"),
    "ask_cuisine": ("What kind of food would you like?", "Any cuisine in particular?",
                    "What type of food are you in the mood for?", "Do you have a cuisine in mind?",
                    "What would you like to eat?"),
    "inform_cuisine": ("{cuisine} food, please.", "I feel like {cuisine}.", "Something {cuisine}.",
                       "{cuisine} would be great.", "Maybe {cuisine}?",
                       "We'd love some {cuisine} food."),
    "offer_restaurant": ("{restaurant} serves {cuisine} food in {area}. Shall I book it?",
                         "How about {restaurant}? It's a nice {cuisine} place.",
                         "I can get you a table at {restaurant}.",
                         "{restaurant} has a table free at {time}. Does that work?",
                         "I'd suggest {restaurant} in {area}, they have great reviews."),
    # Taxi.
    "book_taxi": ("I need a taxi.", "Can you book me a cab?", "I'd like to order a taxi, please.",
                  "Could you get me a taxi?", "I need a ride.", "Please send a taxi.",
                  "I need a taxi to {destination}.", "Can you book me a cab from {origin}?",
                  "I need a taxi at {time}.", "Please send a taxi to {origin}.",
                  "I need a ride from {origin} to {destination}."),
    "offer_taxi": ("A {car} will pick you up at {time}. Is that okay?",
                   "I've found a {car}, arriving at {time}.",
                   "The driver can be there at {time} in a {car}. Shall I confirm?",
                   "There's a {car} available for {time}.",
                   "A {car} can take you, it'll cost about {price}."),
    # Train.
    "book_train": ("I need a train ticket.", "I'd like to book a train.",
                   "Can you help me find a train?", "I want to buy a train ticket.",
                   "I'm looking for a train.", "Are there any trains I could take?",
                   "I need a train to {destination}.",
                   "I'm looking for a train from {origin} to {destination}.",
                   "Are there trains to {destination} {date}?",
                   "I want to get from {origin} to {destination}.",
                   "I need {people} train tickets."),
    "offer_train": ("There's a train at {time} arriving at {arrival}. Shall I book it?",
                    "The {time} train gets in at {arrival}.",
                    "I found a train departing at {time}, it costs {price}.",
                    "Train {train_id} leaves at {time} and arrives at {arrival}.",
                    "How about the {time} service? It arrives by {arrival}."),
    # Weather.
    "ask_weather": ("What's the weather going to be like?", "Can you tell me the forecast?",
                    "What's the weather like?", "I'd like to know the weather forecast.",
                    "How's the weather looking?", "Could you check the weather for me?",
                    "What's the weather like in {city}?", "What's the forecast for {date}?",
                    "Will it be nice in {city} {date}?", "How's the weather in {city} looking?"),
    "ask_city": ("Which city?", "For which city?", "Where are you?",
                 "What location should I check?", "Which city are you interested in?"),
    "inform_city": ("{city}.", "In {city}.", "For {city}, please.", "I'm in {city}.",
                    "The weather in {city}."),
    "inform_weather": ("It will be {condition} with a high of {temperature}.",
                       "Expect {condition} weather, around {temperature}.",
                       "The forecast says {condition}, {temperature}.",
                       "It looks {condition}, with temperatures near {temperature}.",
                       "Mostly {condition}, around {temperature}."),
    "ask_rain": ("Will it rain?", "Do I need an umbrella?", "Is there any chance of rain?",
                 "Should I expect showers?", "Is it going to rain?"),
    "inform_rain": ("There's a {rain_chance} chance of rain.",
                    "The chance of rain is {rain_chance}.",
                    "Rain probability is around {rain_chance}.",
                    "They say {rain_chance} chance of showers.",
                    "About {rain_chance}, so you might want an umbrella."),
    "ask_temperature": ("How warm will it be?", "What's the temperature?", "Will it be cold?",
                        "How hot is it going to get?", "What temperature should I expect?"),
    "inform_temperature": ("Around {temperature}.", "It'll reach {temperature}.",
                           "The high is {temperature}.", "About {temperature} during the day.",
                           "Temperatures around {temperature}."),
    # Shopping.
    "track_order": ("Where is my order?", "I'd like to check on my order.",
                    "My package hasn't arrived yet.", "Can you tell me the status of my order?",
                    "I want to track a parcel.", "I ordered something last week and it's not here.",
                    "Where is my order {order_id}?", "I'd like to check on order {order_id}.",
                    "Has order {order_id} shipped yet?"),
    "inform_order_status": ("Your order {order_status}.",
                            "I can see that the order {order_status}.",
                            "According to our system, it {order_status}.",
                            "Good news, your parcel {order_status}.",
                            "Your {product} order {order_status}."),
    "ask_delivery_date": ("When will it arrive?", "When can I expect it?",
                          "Any idea when it'll get here?", "What's the delivery date?",
                          "How long until it's delivered?"),
    "inform_delivery_date": ("It should arrive by {delivery_date}.",
                             "Expected delivery is {delivery_date}.",
                             "You'll have it by {delivery_date}.",
                             "The courier estimates {delivery_date}.",
                             "It's scheduled for {delivery_date}."),
    "return_item": ("I want to return something.", "I'd like to send an item back.",
                    "How do I return a product?", "I need to make a return.",
                    "Can I get a refund for something I bought?",
                    "I'd like to return an item from my last order.",
                    "I want to return the {product}.", "Can I return the {product}?",
                    "The {product} I bought has to go back."),
    "ask_product": ("Which item is it?", "Which product would you like to return?",
                    "What did you order?", "Which item from the order?",
                    "What are you sending back?"),
    "inform_product": ("The {product}.", "It's the {product}.", "The {product} I ordered.",
                       "Just the {product}.", "The {product}, please."),
    "ask_reason": ("May I ask why you're returning it?", "What's the reason for the return?",
                   "What's wrong with the item?", "Why would you like to send it back?",
                   "Could you tell me the reason for the return?"),
    "inform_reason": ("{reason}.", "Because {reason}.", "Well, {reason}.",
                      "Unfortunately {reason}.", "The problem is that {reason}."),
    "offer_refund": ("I can refund {amount} to your original payment method. Is that okay?",
                     "We can offer a full refund of {amount} or an exchange. Shall I refund it?",
                     "I'll arrange a return label and a refund of {amount}.",
                     "You're eligible for a refund of {amount}. Should I process it?",
                     "I can issue {amount} back to your card once we receive the item."),
    "ask_refund_time": ("How long does the refund take?", "When will I get my money back?",
                        "How soon is the refund processed?", "When will the money show up?",
                        "How long until I see the refund?"),
    "inform_refund_time": ("Usually {refund_days}.", "It takes {refund_days}.",
                           "You should see it within {refund_days}.",
                           "Refunds are processed in {refund_days}.",
                           "Expect it in {refund_days}."),
    # Tech support.
    "report_problem": ("I'm having trouble with {issue}.", "Something is wrong with {issue}.",
                       "I need help, {issue} isn't working.",
                       "Can you help me? I have a problem with {issue}.",
                       "{issue} stopped working.", "I keep having issues with {issue}.",
                       "My {device} has a problem with {issue}.",
                       "I'm having trouble with {issue} on my {device}.",
                       'My {device} keeps saying "{error}".'),
    "ask_device": ("Which device is it?", "What device are you using?",
                   "Is it on your phone or your computer?", "Which device has the problem?",
                   "What kind of device is this on?"),
    "inform_device": ("My {device}.", "It's my {device}.", "On my {device}.", "The {device}.",
                      "It's happening on my {device}."),
    "ask_system": ("Which operating system is it running?", "What system are you on?",
                   "Do you know which software version you have?", "Which OS do you use?",
                   "What version is installed?"),
    "inform_system": ("{system}.", "It runs {system}.", "I'm on {system}.",
                      "I think it's {system}.", "{system}, with the latest update."),
    "ask_error": ("Do you see any error message?", "What does the screen say?",
                  "Is there an error code?", "What exactly happens when you try?",
                  "Does it show an error?"),
    "inform_error": ('It says "{error}".', 'The message is "{error}".',
                     'I get "{error}" every time.', 'Just "{error}".',
                     "There's an error: \"{error}\"."),
    "suggest_fix": ("Please try to {fix}.", "Could you {fix} and see if that helps?",
                    "Let's try this: {fix}.", "I'd suggest you {fix}.",
                    "First, {fix}. Does that help?"),
    "problem_solved": ("Yes, it works now!", "That fixed it, thanks.", "Great, it's working again.",
                       "Perfect, the problem is gone.", "It worked!",
                       "Oh nice, that did the trick."),
    "resolved": ("Great, glad that worked!", "Excellent, happy to hear it.",
                 "Wonderful, so the issue is resolved.", "Good to hear!",
                 "Perfect, I'll close the ticket then."),
    "problem_persists": ("No, it's still not working.", "That didn't help, unfortunately.",
                         "Still the same problem.", "Nope, nothing changed.",
                         "I tried that but it didn't work."),
    "ask_warranty": ("Is my device still under warranty?", "Does the warranty cover this?",
                     "Am I covered by the warranty?", "Would a repair be free?",
                     "What about the warranty?"),
    "inform_warranty": ("Yes, your warranty runs until {warranty_end}.",
                        "Your warranty is valid until {warranty_end}.",
                        "It's covered until {warranty_end}.",
                        "Repairs are free until {warranty_end}.",
                        "According to our records, the warranty ends in {warranty_end}."),
    # Banking.
    "check_balance": ("What's my balance?", "I'd like to check my account balance.",
                      "How much money do I have?", "Can you tell me my balance?",
                      "Could I get my current balance?",
                      "I want to know how much is in my account.",
                      "What's the balance on my {account}?", "How much is in my {account}?"),
    "ask_account": ("Which account is this for?", "Is it your current or savings account?",
                    "Which account would you like to use?", "Could you tell me which account?",
                    "Which of your accounts?"),
    "inform_account": ("My {account}.", "The {account}.", "It's the {account}.",
                       "From my {account}.", "The {account}, please."),
    "inform_balance": ("Your balance is {balance}.", "You have {balance} in your {account}.",
                       "The available balance is {balance}.",
                       "Your {account} currently holds {balance}.",
                       "Right now there's {balance} available."),
    "ask_transactions": ("What was my last payment?", "Can you show my recent transactions?",
                         "What did I spend money on recently?", "Any recent payments?",
                         "What was the last transaction?"),
    "inform_transactions": ("Your last payment was {amount} to {merchant}.",
                            "The most recent transaction is {amount} at {merchant}.",
                            "I can see {amount} paid to {merchant} yesterday.",
                            "Recently you paid {merchant} {amount}.",
                            "There's a card payment of {amount} at {merchant}."),
    "transfer_money": ("I want to transfer some money.", "I need to send money to someone.",
                       "Can I make a transfer?", "I'd like to pay someone.",
                       "How do I send money to a friend?", "Please help me make a payment.",
                       "I want to send {amount} to {recipient}.", "Can I transfer {amount}?",
                       "I need to pay {recipient}."),
    "ask_recipient": ("Who is the money going to?", "Who should receive it?",
                      "What's the recipient's name?", "Who are you sending it to?",
                      "Who's the payee?"),
    "inform_recipient": ("To {recipient}.", "It's for {recipient}.", "{recipient}.",
                         "Send it to {recipient}.", "The recipient is {recipient}."),
    "confirm_transfer": ("So that's {amount} to {recipient}, going out {date}. Correct?",
                         "Just to confirm: {amount} from your {account} to {recipient}?",
                         "I'll send {amount} to {recipient}. Shall I proceed?",
                         "You want to transfer {amount} to {recipient}, is that right?",
                         "Ready to send {amount} to {recipient}. Confirm?"),
    "ask_fee": ("Is there a fee?", "Does it cost anything?", "Are there any charges?",
                "How much is the transfer fee?", "Will I be charged for this?"),
    "inform_fee": ("No, it's free.", "There's a fee of {fee}.", "It costs {fee}.",
                   "A small fee of {fee} applies.", "Transfers like this cost {fee}."),
    "block_card": ("I lost my card.", "I need to block my card.", "My card was stolen!",
                   "Please freeze my debit card.",
                   "I think someone used my card, can you block it?",
                   "I can't find my credit card anywhere.",
                   "Please block my card ending in {card_digits}.",
                   "My card ending {card_digits} was stolen."),
    "ask_card_digits": ("Could you give me the last four digits of the card?",
                        "What are the last four digits?",
                        "Which card is it? The last four digits, please.",
                        "Can you confirm the last 4 digits on the card?",
                        "I'll need the last four digits of the card."),
    "inform_card_digits": ("{card_digits}.", "It ends in {card_digits}.",
                           "The last four are {card_digits}.", "Ending {card_digits}.",
                           "It's {card_digits}."),
    "confirm_card_block": ("I'll block the card ending in {card_digits}. Shall I go ahead?",
                           "Just to confirm, you want to block card {card_digits}?",
                           "The card ending {card_digits} will be blocked at once. Okay?",
                           "Should I cancel the card ending in {card_digits} and order a new one?",
                           "I can freeze card {card_digits} right now. Proceed?"),
    "ask_new_card": ("When will I get a new card?", "Will you send me a replacement?",
                     "How long until the new card arrives?", "Can I get a new card?",
                     "What about a replacement card?"),
    "inform_new_card": ("A replacement card will reach you by {delivery_date}.",
                        "Your new card is on its way and should arrive by {delivery_date}.",
                        "We'll post a new card, expect it by {delivery_date}.",
                        "Yes, a new one is ordered for delivery by {delivery_date}.",
                        "The replacement ships today and arrives by {delivery_date}."),
}

# Extra paraphrases of shared intents in one domain's own words (added to TEMPLATES); a slot in
# a closing turn is one the agent's proposal always mentions.
DOMAIN_TEMPLATES: Dict[str, Dict[str, Tuple[str, ...]]] = {
    "hotel": {
        "thank": ("Thanks, I'm looking forward to the stay.", "Thanks, I'll see you at {hotel}."),
        "confirm": ("Yes, {hotel} sounds great.", "Great, book {hotel} for me."),
        "ask_date": ("When would you like to check in?", "What's your arrival date?"),
        "inform_date": ("I'm arriving {date}.", "Checking in {date}."),
        "ask_people": ("How many guests will be staying?",),
        "ask_name": ("What name should the reservation be under?",),
        "inform_name": ("Put it under {name}, please.",),
        "ask_price": ("How much is it per night?",),
    },
    "restaurant": {
        "thank": ("Thanks, we're looking forward to dinner.", "Thanks, see you at {restaurant}!"),
        "confirm": ("Yes, {restaurant} is perfect.", "Lovely, book {restaurant}, please."),
        "ask_date": ("Which day would you like the table?",),
        "ask_time": ("What time would you like the table?",),
        "inform_people": ("A table for {people}, please.",),
        "ask_name": ("What name is the reservation under?",),
        "inform_name": ("Put it under {name}, please.",),
        "ask_price": ("How expensive is it?",),
        "inform_price": ("About {price} per person.",),
    },
    "taxi": {
        "thank": ("Thanks, I'll be ready.", "Thanks, I'll look out for the {car}."),
        "confirm": ("Yes, the {car} is fine.", "Great, a {car} works."),
        "ask_origin": ("Where should the driver pick you up?", "What's the pickup address?"),
        "inform_origin": ("Pick me up at {origin}, please.",),
        "ask_time": ("When do you need the taxi?", "What time should the driver arrive?"),
        "inform_time": ("I need it at {time}.",),
        "ask_people": ("How many passengers?",),
        "ask_phone": ("Can I have the driver's number?",),
        "inform_duration": ("About {duration}, depending on traffic.",),
    },
    "train": {
        "thank": ("Thanks, that's the ticket sorted.", "Thanks, I'll be on the {time} train."),
        "confirm": ("Yes, the {time} train is fine.", "Yes, book the {time} one."),
        "ask_origin": ("Which station are you leaving from?",),
        "inform_origin": ("I'm departing from {origin}.",),
        "ask_date": ("What day are you travelling?",),
        "inform_date": ("I'm travelling {date}.",),
        "ask_time": ("What time would you like to leave?",),
        "inform_time": ("I'd like to leave after {time}.",),
        "ask_people": ("How many tickets do you need?",),
        "inform_people": ("{people} tickets, please.",),
        "ask_duration": ("How long is the journey?",),
    },
    "weather": {
        "thank": ("Thanks, now I know what to wear.", "Thanks, I'll plan for {condition} weather."),
        "ask_date": ("For which day do you want the forecast?",),
        "inform_date": ("What about {date}?",),
    },
    "shopping": {
        "thank": ("Thanks for sorting out my order.", "Thanks, that's sorted then."),
        "ask_name": ("Can I have the name on the order?",),
        "inform_name": ("The order is under {name}.",),
    },
    "tech_support": {
        "thank": ("Thanks for fixing it.", "Thanks, everything's back to normal."),
    },
    "banking": {
        "thank": ("Thanks for your help with my account.", "Thanks, that's a relief."),
        "ask_name": ("For security, can you confirm your full name?",),
        "inform_name": ("My full name is {name}.",),
        "ask_amount": ("How much would you like to transfer?",),
        "inform_amount": ("I'd like to send {amount}.",),
        "ask_date": ("When should the transfer go out?",),
        "ask_duration": ("How long does the transfer take?",),
    },
}

# Slot values. Values may start a sentence (it is capitalised), so none carries its own article
# unless every template expects one.
FIRST_NAMES = ("Maria", "James", "Aisha", "Chen", "Olivia", "Lucas", "Priya", "Tom", "Sofia",
               "David", "Emma", "Omar", "Hannah", "Kenji", "Laura", "Mateo", "Grace", "Ivan")
LAST_NAMES = ("Lopez", "Smith", "Khan", "Wang", "Brown", "Muller", "Patel", "Nguyen", "Rossi",
              "Johnson", "Kowalski", "Garcia", "Okafor", "Tanaka", "Dubois", "Evans")
RELATIVE_DATES = ("tomorrow", "this Friday", "next Monday", "Saturday", "this weekend",
                  "next Tuesday", "Sunday", "the day after tomorrow", "next Thursday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
AREAS = ("the city centre", "the north", "the south", "the east side", "the west end",
         "the old town", "the harbour area", "the university district")
PRICE_RANGES = ("cheap", "moderately priced", "mid-range", "expensive", "affordable", "upscale")
HOTELS = ("Riverside Inn", "Hotel Aurora", "Parkview Lodge", "Maple House Hotel", "Harbour Hotel",
          "Kensington Suites", "Alder Court", "Bluebell Guesthouse", "Grand Central Hotel")
RESTAURANTS = ("Bella Napoli", "Golden Dragon", "Saffron House", "Le Petit Bistro",
               "Sakura Sushi", "Casa Miguel", "Spice Route", "Blue Fin Grill", "Olive Tree")
CUISINES = ("Italian", "Chinese", "Indian", "Mexican", "Japanese", "Thai", "French", "Greek",
            "vegetarian", "seafood", "Korean", "Lebanese")
CITIES = ("London", "Paris", "New York", "Chicago", "Berlin", "Madrid", "Toronto", "Sydney",
          "Boston", "Seattle", "Edinburgh", "Dublin", "Tokyo", "Rome")
PLACES = {
    "taxi": ("the airport", "Central Station", "the Grand Hotel", "the city museum",
             "the university", "the shopping mall", "the hospital", "the conference centre",
             "14 Elm Street", "27 Park Road", "the football stadium"),
    "train": ("Cambridge", "London", "Oxford", "Manchester", "Leeds", "York", "Bristol",
              "Birmingham", "Norwich", "Brighton", "Liverpool"),
}
STREETS = ("High Street", "Mill Road", "King Street", "Regent Street", "Station Road",
           "Church Lane", "Bridge Street", "Castle Hill")
CAR_COLOURS = ("white", "black", "silver", "grey", "blue", "red")
CAR_MAKES = ("Toyota", "Skoda", "Ford", "Tesla", "Volkswagen", "Honda", "Kia")
PRICES = {"hotel": (60, 320), "restaurant": (15, 90), "taxi": (8, 65), "train": (12, 140)}
AMOUNTS = {"shopping": (10, 400), "banking": (20, 2500)}
TRAVEL_MINUTES = {"taxi": (8, 55), "train": (25, 240)}
TRANSFER_TIMES = ("a few minutes", "one business day", "up to two working days", "an hour")
CONDITIONS = ("sunny", "cloudy", "rainy", "partly cloudy", "windy", "foggy", "stormy", "snowy")
PRODUCTS = ("wireless headphones", "running shoes", "coffee maker", "phone case", "winter jacket",
            "desk lamp", "backpack", "blender", "yoga mat", "smart watch", "bluetooth speaker")
ORDER_STATUSES = ("has shipped and is on its way", "is out for delivery today",
                  "is being packed at our warehouse", "was handed to the courier yesterday",
                  "is delayed at the sorting centre")
RETURN_REASONS = ("it doesn't fit", "it arrived damaged", "it's the wrong colour",
                  "it stopped working after a day", "I ordered the wrong size",
                  "it looks different from the photos", "I changed my mind")
REFUND_TIMES = ("3 to 5 business days", "a week", "up to 10 days", "two working days")
ISSUES = ("my internet connection", "the wifi", "my email", "the app", "my account login",
          "the printer", "video calls", "the bluetooth connection")
DEVICES = ("laptop", "phone", "router", "printer", "tablet", "smart TV", "desktop computer")
SYSTEMS = ("Windows 11", "Windows 10", "macOS Sonoma", "Android 14", "iOS 17", "Ubuntu 22.04",
           "ChromeOS")
ERRORS = ("connection timed out", "no internet", "password incorrect", "device not found",
          "update failed", "disk full", "unknown error 0x80070005", "server not responding")
FIXES = ("restart it by holding the power button for ten seconds",
         "unplug the router for thirty seconds and plug it back in",
         "install the latest update from the settings menu", "clear the cache and try again",
         "reinstall the driver", "reset the network settings", "sign out and sign back in",
         "switch off the VPN")
ACCOUNTS = ("current account", "savings account", "joint account", "business account",
            "checking account")
MERCHANTS = ("Amazon", "Tesco", "Starbucks", "Uber", "Netflix", "Shell", "IKEA", "Spotify")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight")

# Optional courtesy around a user turn, and texting shorthand for noisy user turns.
ASKING_PREFIXES = ("Excuse me. ", "Sorry to bother you. ", "Hello again. ", "Quick question. ")
ANSWERING_PREFIXES = ("Okay. ", "Right. ", "Sure. ", "Hmm. ", "Of course. ")
ASKING_SUFFIXES = (" Thanks.", " Thank you!", " If that's possible.", " Thanks in advance.")
ANSWERING_SUFFIXES = (" Thanks.", " Thank you.", " Cheers.")
SHORTHAND = ((r"\byou\b", "u"), (r"\bplease\b", "pls"), (r"\bthanks\b", "thx"),
             (r"\bokay\b", "ok"), (r"\btomorrow\b", "tmrw"), (r"\bthe\b", "teh"))
COURTESY_INTENTS = ("greet", "thank", "goodbye", "no_more")


def _clock(minutes: int, style: str) -> str:
    """A time of day in a dialogue's `style`: "24h" ("19:30") or "12h" ("7:30 pm", "8 am")."""
    hour, minute = divmod(minutes % (24 * 60), 60)
    half_day_hour = hour % 12 or 12
    suffix = "am" if hour < 12 else "pm"
    if style == "24h":
        return f"{hour:02d}:{minute:02d}"
    if minute == 0:
        return f"{half_day_hour} {suffix}"
    return f"{half_day_hour}:{minute:02d} {suffix}"


def _span(minutes: int) -> str:
    """A duration: "25 minutes", "1 hour 10 minutes", "2 hours"."""
    hours, minutes = divmod(minutes, 60)
    parts = []
    if hours:
        parts.append(f"{hours} hour{'s' if hours > 1 else ''}")
    if minutes:
        parts.append(f"{minutes} minutes")
    return " ".join(parts)


def _ordinal(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return f"{day}th"
    return f"{day}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"


def _date(rng: random.Random) -> str:
    """A date as people say it: "tomorrow", "next Monday", "June 14th", "the 3rd of May"."""
    if rng.random() < 0.55:
        return rng.choice(RELATIVE_DATES)
    ordinal = _ordinal(rng.randint(1, 28))
    month = rng.choice(MONTHS)
    return f"{month} {ordinal}" if rng.random() < 0.5 else f"the {ordinal} of {month}"


def _full_name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def _count(rng: random.Random, low: int, high: int) -> str:
    """A small number, as a digit or a word."""
    number = rng.randint(low, high)
    return NUMBER_WORDS[number] if rng.random() < 0.5 else str(number)


def _money(rng: random.Random, low: float, high: float, cents: bool = False) -> str:
    amount = rng.uniform(low, high) if cents else rng.randint(int(low), int(high))
    return f"${amount:,.2f}" if cents else f"${amount:,}"


def _other_than(values: "DialogueValues", key: str, draw: Callable[[], str]) -> str:
    """A fresh draw that differs from `values[key]` (a destination unlike the origin, ...)."""
    taken = values[key]
    choice = draw()
    while choice == taken:
        choice = draw()
    return choice


def _train_id(rng: random.Random) -> str:
    return f"{rng.choice('TRGW')}{rng.randint(1000, 9999)}"


def _reference(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(8))


# How each slot value is drawn: (rng, the dialogue's values so far, domain name) -> text.
# departure_minutes and travel_minutes are the numbers behind time, arrival and duration;
# clock_style keeps the times of one dialogue in one spelling.
SAMPLERS: Dict[str, Callable[[random.Random, "DialogueValues", str], str]] = {
    "name": lambda rng, values, domain: _full_name(rng),
    "recipient": lambda rng, values, domain: _other_than(values, "name", lambda: _full_name(rng)),
    "date": lambda rng, values, domain: _date(rng),
    "delivery_date": lambda rng, values, domain: _date(rng),
    "departure_minutes": lambda rng, values, domain: str(rng.randrange(6 * 60, 22 * 60, 15)),
    "clock_style": lambda rng, values, domain: rng.choice(("24h", "12h", "12h")),
    "time": lambda rng, values, domain: _clock(int(values["departure_minutes"]),
                                               values["clock_style"]),
    "travel_minutes": lambda rng, values, domain: str(
        rng.randint(*TRAVEL_MINUTES.get(domain, (10, 60)))),
    "duration": lambda rng, values, domain: (
        _span(int(values["travel_minutes"])) if domain in TRAVEL_MINUTES
        else rng.choice(TRANSFER_TIMES)),
    "arrival": lambda rng, values, domain: _clock(
        int(values["departure_minutes"]) + int(values["travel_minutes"]), values["clock_style"]),
    "people": lambda rng, values, domain: _count(rng, 2, 8),
    "nights": lambda rng, values, domain: (
        rng.choice(("one night", "1 night")) if rng.random() < 0.2
        else f"{_count(rng, 2, 7)} nights"),
    "area": lambda rng, values, domain: rng.choice(AREAS),
    "price_range": lambda rng, values, domain: rng.choice(PRICE_RANGES),
    "hotel": lambda rng, values, domain: rng.choice(HOTELS),
    "stars": lambda rng, values, domain: str(rng.randint(2, 5)),
    "restaurant": lambda rng, values, domain: rng.choice(RESTAURANTS),
    "cuisine": lambda rng, values, domain: rng.choice(CUISINES),
    "city": lambda rng, values, domain: rng.choice(CITIES),
    "origin": lambda rng, values, domain: rng.choice(PLACES[domain]),
    "destination": lambda rng, values, domain: _other_than(
        values, "origin", lambda: rng.choice(PLACES[domain])),
    "car": lambda rng, values, domain: f"{rng.choice(CAR_COLOURS)} {rng.choice(CAR_MAKES)}",
    "phone": lambda rng, values, domain: (
        f"0{rng.randint(1000, 9999)} {rng.randint(100000, 999999)}"),
    "address": lambda rng, values, domain: f"{rng.randint(1, 120)} {rng.choice(STREETS)}",
    "price": lambda rng, values, domain: _money(rng, *PRICES.get(domain, (10, 100))),
    "parking_fee": lambda rng, values, domain: _money(rng, 5, 30),
    "reference": lambda rng, values, domain: _reference(rng),
    "train_id": lambda rng, values, domain: _train_id(rng),
    "condition": lambda rng, values, domain: rng.choice(CONDITIONS),
    "temperature": lambda rng, values, domain: (
        f"{rng.randint(-8, 2) if values['condition'] == 'snowy' else rng.randint(4, 34)} degrees"),
    "rain_chance": lambda rng, values, domain: f"{rng.randrange(0, 100, 10)}%",
    "order_id": lambda rng, values, domain: str(rng.randint(100000, 999999)),
    "product": lambda rng, values, domain: rng.choice(PRODUCTS),
    "order_status": lambda rng, values, domain: rng.choice(ORDER_STATUSES),
    "reason": lambda rng, values, domain: rng.choice(RETURN_REASONS),
    "refund_days": lambda rng, values, domain: rng.choice(REFUND_TIMES),
    "issue": lambda rng, values, domain: rng.choice(ISSUES),
    "device": lambda rng, values, domain: rng.choice(DEVICES),
    "system": lambda rng, values, domain: rng.choice(SYSTEMS),
    "error": lambda rng, values, domain: rng.choice(ERRORS),
    "fix": lambda rng, values, domain: rng.choice(FIXES),
    "warranty_end": lambda rng, values, domain: f"{rng.choice(MONTHS)} {rng.randint(2025, 2028)}",
    "account": lambda rng, values, domain: rng.choice(ACCOUNTS),
    "amount": lambda rng, values, domain: _money(rng, *AMOUNTS[domain], cents=rng.random() < 0.3),
    "balance": lambda rng, values, domain: _money(rng, 10, 25000, cents=True),
    "merchant": lambda rng, values, domain: rng.choice(MERCHANTS),
    "fee": lambda rng, values, domain: _money(rng, 1, 15, cents=True),
    "card_digits": lambda rng, values, domain: f"{rng.randrange(10000):04d}",
}
# Values drawn anew with a value: the number behind it and what is computed from it.
TIED_VALUES = {"time": ("departure_minutes", "arrival")}


class DialogueValues(dict):
    """The slot values of one dialogue, each drawn the first time a template needs it.

    Drawing lazily keeps a value consistent across turns and spends random numbers only on
    the slots a dialogue mentions.
    """

    def __init__(self, rng: random.Random, domain: str):
        super().__init__()
        self.rng, self.domain = rng, domain

    def __missing__(self, key: str) -> str:
        value = SAMPLERS[key](self.rng, self, self.domain)
        self[key] = value
        return value

    def redraw(self, key: str) -> None:
        """Forgets `key` and the values tied to it, so the next mention draws anew."""
        for name in (key,) + TIED_VALUES.get(key, ()):
            self.pop(name, None)

    def redraw_differently(self, key: str) -> None:
        """Redraws `key` until it differs from its current value (a user's correction)."""
        old = self.get(key)
        self.redraw(key)
        while self[key] == old:
            self.redraw(key)


@functools.lru_cache(maxsize=None)
def _fields(template: str) -> frozenset:
    """The slot names a template mentions."""
    return frozenset(field for _, field, _, _ in string.Formatter().parse(template) if field)


@functools.lru_cache(maxsize=None)
def templates_for(domain: str, intent: str) -> Tuple[str, ...]:
    """The paraphrases of `intent` as spoken in `domain`: shared ones plus the domain's own."""
    return TEMPLATES[intent] + DOMAIN_TEMPLATES.get(domain, {}).get(intent, ())


def _add_typo(rng: random.Random, text: str) -> str:
    """Swaps two neighbouring letters or drops one, inside a word of four letters or more."""
    words = text.split(" ")
    candidates = [i for i, word in enumerate(words) if len(word) >= 4 and word.isalpha()]
    if not candidates:
        return text.lower()
    index = rng.choice(candidates)
    word = words[index]
    at = rng.randrange(1, len(word) - 1)
    if rng.random() < 0.5:
        words[index] = word[:at] + word[at + 1] + word[at] + word[at + 2:]
    else:
        words[index] = word[:at] + word[at + 1:]
    return " ".join(words)


def _casual(text: str) -> str:
    """All lower case without the final full stop, as typed on a phone."""
    return text.lower().rstrip(".") or text.lower()


def _shorthand(rng: random.Random, text: str) -> str:
    """Texting shorthand ("u", "pls", "thx", ...) in lower case, or just lower case."""
    lowered = _casual(text)
    pattern, replacement = rng.choice(SHORTHAND)
    return re.sub(pattern, replacement, lowered)


def _user_variation(rng: random.Random, text: str, intent: str, asking: bool) -> str:
    """Politeness around task turns, then typos or casual typing in a minority of user turns.

    `asking` turns (requests and questions) get asking courtesies, the others answering ones.
    """
    if intent not in COURTESY_INTENTS and rng.random() < POLITENESS_RATE:
        if text.endswith("?") or rng.random() < 0.5:
            text = rng.choice(ASKING_PREFIXES if asking else ANSWERING_PREFIXES) + text
        else:
            text = text + rng.choice(ASKING_SUFFIXES if asking else ANSWERING_SUFFIXES)
    if rng.random() < NOISE_RATE:
        kind = rng.random()
        if kind < 0.4:
            text = _add_typo(rng, text)
        elif kind < 0.75:
            text = _casual(text)
        else:
            text = _shorthand(rng, text)
    return text


class _Conversation:
    """Turns of one dialogue being written, rendered with its slot values."""

    def __init__(self, rng: random.Random, domain: Domain, task: Task):
        self.rng, self.domain, self.task = rng, domain, task
        self.values = DialogueValues(rng, domain.name)
        self.turns: List[Turn] = []
        self.used_templates: Set[str] = set()

    def say(self, speaker: str, intent: str, template: Optional[str] = None) -> None:
        """Adds a turn; without a `template`, a paraphrase not yet used in this dialogue."""
        if template is None:
            paraphrases = templates_for(self.domain.name, intent)
            fresh = [t for t in paraphrases if t not in self.used_templates]
            template = self.rng.choice(fresh or paraphrases)
        self.used_templates.add(template)
        text = template.format_map(self.values)
        text = text[0].upper() + text[1:]
        if speaker == USER:
            asking = intent == self.task.request or intent.startswith("ask_")
            text = _user_variation(self.rng, text, intent, asking)
        self.turns.append(Turn(speaker, text, {"intent": intent}))


def _choose_extras(rng: random.Random, task: Task, askable: List[str],
                   budget: int) -> Dict[str, int]:
    """Parts of the dialogue beyond its core (name -> turns) that fit in `budget` turns.

    Exchanges about the task's required slots among `askable` always happen; the other
    `askable` slots are preferred to the remaining parts, so most dialogues ask for a few
    details before the proposal.
    """
    chosen = {f"slot:{slot}": 2 for slot in askable if slot in task.required}
    budget -= 2 * len(chosen)
    opening = rng.choices(OPENINGS, weights=OPENING_WEIGHTS)[0]
    candidates = [(rng.random() * 0.5, f"slot:{slot}", 2) for slot in askable
                  if slot not in task.required]
    candidates += [(rng.random(), f"question:{index}", 2) for index in range(len(task.questions))]
    candidates += [(rng.random(), name, size) for name, size in
                   (opening, ("ask_more", 2), ("farewell", 1))]
    if rng.random() < HOLD_RATE:
        candidates.append((rng.random(), "hold", 1))
    if task.accept:
        candidates.append((rng.random(), "rejection", 3 if task.corrections else 2))
    for _, name, size in sorted(candidates):
        if size <= budget:
            chosen[name] = size
            budget -= size
    return chosen


def _core_length(task: Task) -> int:
    """Turns every dialogue of `task` has: request, proposal, acceptance, done, thanks, closing."""
    return 4 + (task.accept is not None) + (task.done is not None)


def _dialogue(rng: random.Random, number: int, domain: Domain) -> Dialogue:
    task = rng.choice(domain.tasks)
    request = rng.choice(templates_for(domain.name, task.request))
    askable = [slot for slot in task.slots if slot not in _fields(request)]
    target = rng.randint(MIN_TURNS, MAX_TURNS)
    extras = _choose_extras(rng, task, askable, target - _core_length(task))
    talk = _Conversation(rng, domain, task)

    if "agent_opens" in extras:
        talk.say(AGENT, "offer_help")
    elif "user_greets" in extras:
        talk.say(USER, "greet")
    elif "greeting_exchange" in extras:
        talk.say(USER, "greet")
        talk.say(AGENT, "offer_help")
    talk.say(USER, task.request, request)
    for slot in askable:
        if f"slot:{slot}" in extras:
            talk.say(AGENT, f"ask_{slot}")
            talk.say(USER, f"inform_{slot}")
    if "hold" in extras:
        talk.say(AGENT, "hold")
    talk.say(AGENT, task.proposal)
    if task.accept:
        if "rejection" in extras:
            talk.say(USER, task.reject)
            if task.corrections:
                corrected = rng.choice(task.corrections)
                talk.values.redraw_differently(corrected)
                talk.say(USER, f"inform_{corrected}")
            for offered in task.offered:
                talk.values.redraw(offered)
            talk.say(AGENT, task.proposal)
        talk.say(USER, task.accept)
        if task.done:
            talk.say(AGENT, task.done)
    for index, (question, answer) in enumerate(task.questions):
        if f"question:{index}" in extras:
            talk.say(USER, question)
            talk.say(AGENT, answer)
    talk.say(USER, "thank")
    if "ask_more" in extras:
        talk.say(AGENT, "ask_more")
        talk.say(USER, "no_more")
        talk.say(AGENT, "goodbye")
    else:
        talk.say(AGENT, rng.choice(("welcome", "goodbye")))
    if "farewell" in extras:
        talk.say(USER, "goodbye")
    return Dialogue(f"demo-{number:06d}", tuple(talk.turns), {"domain": domain.name})


def generate(num_dialogues: int, seed: int = 0) -> Iterator[Dialogue]:
    """Streams `num_dialogues` labelled dialogues, the same ones for the same seed.

    Domains come in blocks of one dialogue per domain, shuffled, so every prefix of the corpus
    is balanced to within one dialogue per domain.
    """
    if num_dialogues < 0:
        raise ValueError(f"num_dialogues must be >= 0, got {num_dialogues}")
    rng = random.Random(seed)
    block: List[Domain] = []
    for number in range(1, num_dialogues + 1):
        if not block:
            block = list(DOMAINS)
            rng.shuffle(block)
        yield _dialogue(rng, number, block.pop())
