# json.loads of pyperformance's bm_json_loads documents (EMPTY, SIMPLE,
# NESTED, HUGE as text), the whole ROUNDS times: many small dicts, lists and
# strings made and dropped.
import json
import random
import sys

DICT = {"ads_flags": 0, "age": 18, "bulletin_count": 0, "comment_count": 0, "country": "BR", "encrypted_id": "G9urXXAJwjE",
        "favorite_artists": ["Geo", "Cello Jones", "Tomasz Stanko"], "favorite_authors": ["Jane Austen"], "favorite_books": [],
        "favorite_movies": ["Pulp Fiction"], "gender": "m", "has_blog": True, "profile_id": 1337, "username": "jaoneves"}
TUPLE = ([265867233, 265868503, 265252341, 265243910, 265879514, 266219766, 266021701, 265843726, 265592821, 265246784], 60)


def mutate(obj):
    random.seed(5)
    d = dict(obj)
    for k in list(d)[:5]:
        d[k + "_%d" % random.randint(0, 9)] = d.pop(k)
    return d


DICT_GROUP = [mutate(DICT) for _ in range(3)]
DOCS = [json.dumps(x) for x in (DICT, TUPLE, DICT_GROUP, [DICT_GROUP] * 100)]
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
n = 0
for _ in range(rounds):
    for doc in DOCS:
        for _ in range(20):
            n += len(json.loads(doc))
print(n)
