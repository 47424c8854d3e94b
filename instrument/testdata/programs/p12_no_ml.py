import sys
print("hello", file=sys.stderr)
