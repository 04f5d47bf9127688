import sys
from pathlib import Path

# tests import the shared exact cases as `problems`
sys.path.insert(0, str(Path(__file__).parent))
