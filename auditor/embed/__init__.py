"""Support for the ``embedding`` method: model loading, an embedding cache, segmenting, vector
search, evidence scoring and threshold calibration. One concept per module:

``model``      the bundled (or any local) sentence-transformers model, loaded offline; :class:`Encoder`
``cache``      embeddings keyed by normalized-text hash, stored as ``.npy`` + JSON (no pickle)
``segment``    long items and code cut into the segments that carry their meaning
``vsearch``    FAISS inner-product search (exact, or IVF/HNSW for large eval sets) and a numpy twin
``tfidf``      a lexical channel: TF-IDF over identifier-split words, IDF from the eval side
``evidence``   the score parts (cosine, margin, mutual best, token overlap, entities) and the decision
``calibrate``  positives/hard negatives from an eval set, precision/recall per threshold
``onnx``       the encoder's ONNX export (fp32 / int8), built locally and cached
``prefilter``  a static (model2vec) model distilled locally, ranking training units before the encoder
``gate``       a lexical gate: a training unit reaches the encoder only if it shares rare words/values with an eval segment

Everything heavy (torch, sentence-transformers, faiss) is imported lazily, so importing this
package costs nothing when the ``embed`` extra is absent.
"""
