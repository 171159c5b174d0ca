# json.dumps of pyperformance's bm_json_dumps data (EMPTY, SIMPLE, NESTED,
# and HUGE: a list of 1000 NESTED), every case encoded its count of times,
# the whole ROUNDS times.  Each HUGE dumps builds thousands of small str
# chunks and drops them: pymalloc arenas come and go.
import json
import sys

EMPTY = ({}, 2000)
SIMPLE_DATA = {"key1": 0, "key2": True, "key3": "value", "key4": "foo", "key5": "string"}
SIMPLE = (SIMPLE_DATA, 1000)
NESTED_DATA = {"key1": 0, "key2": SIMPLE[0], "key3": "value", "key4": SIMPLE[0], "key5": SIMPLE[0], "key": "\u0105\u0107\u017c"}
NESTED = (NESTED_DATA, 1000)
HUGE = ([NESTED[0]] * 1000, 1)
CASES = [EMPTY, SIMPLE, NESTED, HUGE]

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
n = 0
for _ in range(rounds):
    for obj, count in CASES:
        for _ in range(count):
            n += len(json.dumps(obj))
print(n)
