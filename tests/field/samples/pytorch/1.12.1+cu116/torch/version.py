__version__ = '1.12.1+cu116'
debug = False
cuda = '11.6'
git_version = '664058fa83f1d8eede5d66418abff6e20bd76ca8'
hip = None
