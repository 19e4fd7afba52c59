"""ALiCT Studio core library: linguistic-capability testing of NLP classifiers.

The core never imports streamlit; the app layer (``app.py``, ``pages/``) is a thin view over it.
"""

__version__ = "0.1.0"
