"""`explain`: why one key's rows came out as they did: the join's rules (`rules.py`), applied to the key's
source rows (`key.py`) and its history in the target (`key_history.py`)."""
