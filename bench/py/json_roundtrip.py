"""json_roundtrip: json.dumps and json.loads of a list of small records.

    PYTHONMALLOC=malloc /usr/bin/python3 bench/py/json_roundtrip.py [ROUNDS]

Each round serialises 20,000 small records (a dict of an int, a float, two
short strings, a bool and a list of three ints) and parses the text back:
about a quarter of a million short-lived objects a round.  Run with
PYTHONMALLOC=malloc, every one of them is a malloc and a free, so a
preloaded malloc's cost per call shows in an ordinary Python workload
(issue 10).  Prints its own time (the rounds, not interpreter start):
"MS ms rounds R bytes B".
"""
import json
import sys
import time


def records(n):
    return [
        {
            "id": i,
            "score": i * 0.25,
            "name": "item-%d" % i,
            "tag": "abcdefgh"[i % 8] * (i % 5 + 1),
            "ok": i % 3 == 0,
            "v": [i, i + 1, i + 2],
        }
        for i in range(n)
    ]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    data = records(20000)
    size = 0
    t0 = time.perf_counter()
    for _ in range(rounds):
        text = json.dumps(data)
        back = json.loads(text)
        size += len(text)
        if len(back) != len(data):
            raise SystemExit("json_roundtrip: lost records")
        del back, text
    t1 = time.perf_counter()
    print("%.2f ms rounds %d bytes %d" % ((t1 - t0) * 1e3, rounds, size))


if __name__ == "__main__":
    main()
