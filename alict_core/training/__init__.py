"""Everything that trains or converts a model (parser, MLM head, classifiers); imported only by ``build``.

Runtime code reads the artefacts written here through ``alict_core.models.artefacts`` and never imports
this package (a test checks it).
"""
