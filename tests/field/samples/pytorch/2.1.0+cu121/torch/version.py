from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.1.0+cu121'
debug = False
cuda: Optional[str] = '12.1'
git_version = '7bcf7da3a268b435777fe87c7794c382f444e86d'
hip: Optional[str] = None
