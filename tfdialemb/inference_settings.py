"""The settings inference must repeat from training, declared once as options: `train` defines
them as method options and records them in the model directory (`method.json`) for each kind it
serves; `evaluate`, `export` and `encode` define them as flags. How a command settles them is
`tfdialemb.kind_registry.resolve`.
"""
from tfdialemb.core.options import Option

POOLING = Option("pooling", "mean", "Token pooling of the last layer for sentence embeddings.",
                 choices=("mean", "cls"))
MAX_LENGTH = Option("max_length", None, "Tokens per input, special tokens included; longer inputs "
                    "are truncated (default: the model's recorded length, else per kind: "
                    "sentence 128, the other kinds 512).", lower_bound=3, kind=int)
SEPARATOR = Option("separator", "sep", "Token between the turns of a packed dialogue: [SEP] or "
                   "[EOU].", choices=("sep", "eou"))
SPEAKER_PREFIX = Option("speaker_prefix", False, "Write each turn of a packed dialogue as \"{speaker index} "
                        "{utterance}\" (the augmentation thesis' released encoder input).")
FINAL_SEPARATOR = Option("final_separator", False, "End a packed dialogue with the separator too, "
                         "\"[CLS] t_0 SEP ... t_n SEP\" (a tokenizer's own [CLS] text [SEP], as the "
                         "augmentation thesis' released code feeds BERT).")
DIALOGUE_POOLING = Option("dialogue_pooling", "interlocutor", "The dialogue embedding served and validated: "
                          "dial2vec's Eq. 4 interlocutor pooling, the mean of all tokens or the [CLS] "
                          "state.", choices=("interlocutor", "mean", "cls"))
NUM_ROLES = Option("num_roles", 2, "Interlocutors told apart (views p1..pR); speakers past them "
                   "fold into the last role.", lower_bound=2)
SPEAKER_TOKENS = Option("speaker_tokens", True, "Curved contrastive texts carry [O] / [E] speaker "
                        "tokens.")
MERGE_TURNS = Option("merge_consecutive_turns", True, "Merge consecutive turns of one speaker before "
                     "use (DialogueCSE and dial2vec pre-processing).")
MIN_TURNS = Option("min_turns", 2, "Drop dialogues with fewer turns (after merging) before building "
                   "(DialogueCSE drops JDDC / ECD dialogues under 4).", lower_bound=1)
POOL_DIALOGUES = Option("pool_dialogues", 100_000, "Negatives are drawn from a uniform reservoir sample of "
                        "this many dialogues: a dialogue, then one of its utterances (DialogueCSE Sec. 4.1). "
                        "At least the corpus's number of dialogues draws from all of it; the build manifest's "
                        "counts.negative_pool says what the pool held.", lower_bound=1)
PAIR_LAYOUTS = ("paper", "ums")
"""The cross-encoder inputs `tfdialemb.text.pair_packing` packs: FGC's text, UMS-ResSel's code."""
PAIR_LAYOUT = Option("pair_layout", "paper", "How a cross-encoder packs a context and a response: paper "
                     "([EOT] after each context turn) or ums (also after the response, taesunwhang/UMS-ResSel); "
                     "formerly --fgc_input.", choices=PAIR_LAYOUTS)
CURVED = Option("curved", "c3l", "A C3L triple-encoder or a CCL bi-encoder.", choices=("c3l", "ccl"))
NORMALIZE = Option("normalize", False, "Scale every embedding to unit L2 norm (sentence-transformers' "
                   "Normalize), so a dot product is a cosine.")
CONTEXT = Option("context", 3, "Utterances before a response that a context-response model encodes, "
                 "each on its own (the augmentation thesis, appendix 1.1: 3).", lower_bound=1)

SETTINGS = {o.name: o for o in (POOLING, MAX_LENGTH, SEPARATOR, NUM_ROLES, SPEAKER_TOKENS,
                                MERGE_TURNS, CURVED, PAIR_LAYOUT, CONTEXT, SPEAKER_PREFIX, FINAL_SEPARATOR,
                                DIALOGUE_POOLING)}
