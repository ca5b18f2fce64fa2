from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.0.1+cu118'
debug = False
cuda: Optional[str] = '11.8'
git_version = 'e9ebda29d87ce0916ab08c06ab26fd3766a870e5'
hip: Optional[str] = None
