"""bytebpe: train byte-level BPE tokenizers fast, and encode with them.

>>> from bytebpe import Tokenizer
>>> tok = Tokenizer.train_from_iterator(["hello world"] * 10, vocab_size=260, progress=False)
>>> tok.decode(tok.encode("hello world"))
'hello world'
"""

from __future__ import annotations

import logging

from bytebpe._bytebpe import __version__
from bytebpe.cluster import encode_ray
from bytebpe.errors import (
    BlockError,
    ClusterError,
    CorruptTokenizerError,
    InputError,
    PatternError,
    StoreError,
    TrainingWarning,
    UnknownTokenError,
)
from bytebpe.phases import Phase
from bytebpe.seeds import SEED_PRESETS
from bytebpe.sources import read_files
from bytebpe.store import RunStore
from bytebpe.tokenizer import Encoding, Merge, StreamingDecoder, Tokenizer, encode_to_file

# The package's logger: training logs what it resumes, reuses and finishes (INFO). Silent
# unless the application configures logging.
logging.getLogger("bytebpe").addHandler(logging.NullHandler())

__all__ = [
    "SEED_PRESETS",
    "BlockError",
    "ClusterError",
    "CorruptTokenizerError",
    "Encoding",
    "InputError",
    "Merge",
    "PatternError",
    "Phase",
    "RunStore",
    "StoreError",
    "StreamingDecoder",
    "Tokenizer",
    "TrainingWarning",
    "UnknownTokenError",
    "__version__",
    "encode_ray",
    "encode_to_file",
    "read_files",
]
