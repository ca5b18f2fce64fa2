from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.1.2+cu121'
debug = False
cuda: Optional[str] = '12.1'
git_version = 'a8e7c98cb95ff97bb30a728c6b2a1ce6bff946eb'
hip: Optional[str] = None
