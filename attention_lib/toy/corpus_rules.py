"""The rules of chapter 12's corpus: foods, their kinds and tastes, and the templates.

``tools/authoring/make_corpus.py`` writes ``toy/data/food.txt`` with :func:`corpus`;
chapter 12 reads the same rules to check what its model writes (do its sentences follow the
templates, does each food get a taste of its kind?). The generator is seeded, so the corpus
is the same on every machine.

The world it describes has one rule that matters for the chapter: what a food tastes like
depends on the *kind* of food. Cakes and pies are mostly "delicious" or "sweet", lemons
"sour", curries "spicy", and so on, so the word after "it was" depends on a food named
several words earlier. The running example, "I ate the cake and it was delicious .", is
left out, with every sentence that contains "ate the cake and it was".
"""

from __future__ import annotations

import re

import numpy as np

SEED = 12
N_SENTENCES = 6000
LEFT_OUT = "I ate the cake and it was delicious ."

# Kinds of food: a line of foods, then a line of taste words with weights (the first is
# the likeliest taste of that kind).
KIND_TABLE = """
dessert: cake pie tart cookie brownie muffin pudding pastry cupcake waffle pancake donut
    cheesecake crumble trifle fudge biscuit
  tastes: delicious 5, sweet 4, rich 2, soft 2, lovely 1
sour: lemon lime grapefruit pickle yogurt rhubarb sauerkraut cranberry kiwi vinegar
  tastes: sour 6, sharp 3, tangy 3, refreshing 1
spicy: curry chili salsa kebab wasabi jalapeno taco ramen
  tastes: spicy 6, hot 3, fiery 2, warming 1
salty: fries chips bacon pretzel cheese olives crackers popcorn ham
  tastes: salty 5, crispy 3, savory 3, tasty 1
bitter: coffee tea kale chocolate espresso cocoa broccoli endive
  tastes: bitter 6, strong 3, dark 2, smooth 1
fruit: apple pear melon peach mango plum orange banana cherry grape
    strawberry pineapple apricot watermelon
  tastes: juicy 5, fresh 4, ripe 3, sweet 1
soup: soup stew broth chowder risotto casserole
  tastes: hearty 4, warm 4, thick 2, salty 1
bread: bread toast pizza pasta rice sandwich noodles bagel porridge
    dumpling omelette burrito
  tastes: warm 4, filling 4, soft 2, tasty 2
"""


def _kinds(table: str) -> dict:
    """``{kind: (foods as one string, {taste: weight})}``, read from :data:`KIND_TABLE`."""
    kinds, kind = {}, None
    for line in table.strip().splitlines():
        if line.startswith("  tastes: "):
            pairs = (item.split() for item in line.removeprefix("  tastes: ").split(", "))
            kinds[kind] = (kinds[kind], {word: int(weight) for word, weight in pairs})
        elif line.startswith(" "):  # more foods of the same kind
            kinds[kind] += " " + line.strip()
        else:
            kind, foods = line.split(": ")
            kinds[kind] = foods
    return kinds


KINDS = _kinds(KIND_TABLE)
# Foods that take no "a": mass nouns ("rice", "some coffee") and plurals ("fries", "they
# were"). Every other food is countable and singular ("a cake", "an omelette").
MASS = set(
    "fudge yogurt rhubarb sauerkraut vinegar chili salsa wasabi ramen bacon cheese popcorn "
    "ham coffee tea kale chocolate espresso cocoa broccoli soup stew broth chowder risotto "
    "bread toast pasta rice porridge".split()
)
PLURAL = set("fries chips olives crackers noodles".split())
VERY = "very really quite so rather truly".split()
BAD = {"bland": 2, "stale": 1, "cold": 2, "burnt": 1, "awful": 1}  # any food, now and then

PEOPLE = (
    "my sister, my brother, my friend, my mother, my father, our neighbour, the chef, "
    "the baker, my aunt, my uncle, the waiter, my cousin, the teacher, my grandmother, "
    "my grandfather, the cook, my colleague, the host, our guest, my daughter, my son, "
    "the farmer, my partner"
).split(", ")
SUBJECTS = ["I", "we", "she", "he", "they"]
PLACES = (
    "bakery market cafe restaurant kitchen canteen party picnic festival diner "
    "wedding school fair bistro hotel stall"
).split()
TIMES = (
    "at lunch, for breakfast, after dinner, on Sunday, last night, this morning, "
    "at the party, in the evening, at noon, on Friday, on Saturday, yesterday, "
    "at the weekend, for supper, before work, after school"
).split(", ")
EAT = "ate tried shared finished tasted ordered bought enjoyed devoured sampled".split()
MAKE = "baked cooked made brought served prepared fixed grilled".split()
# How much of a food, by its form: "{a}" becomes "a" or "an", whichever the food needs.
AMOUNT = {
    "count": "a slice of, a piece of, a bite of, half {a}".split(", "),
    "mass": "a bowl of, a plate of, some, a bit of".split(", "),
    "plural": "a bowl of, a plate of, some, a handful of".split(", "),
}

# {it} {was} {is_} {this} agree with the food ("it was", "they were"); {a_food} is the
# food with the article it needs, if any ("a cake", "an apple", "rice", "fries").
TEMPLATES = [
    "{S} {eat} the {food} and {it} {was} {taste} .",
    "{S} {eat} the {food} {time} and {it} {was} {taste} .",
    "{S} {eat} {amount} {food} and {it} {was} {taste} .",
    "the {food} {was} {taste} .",
    "the {food} from the {place} {was} {taste} .",
    "the {food} tasted {taste} .",
    "{this} {food} {is_} {taste} .",
    "{P} {make} {a_food} and {it} {was} {taste} .",
    "{P} {make} the {food} {time} and {it} tasted {taste} .",
    "{P} said the {food} {was} {taste} .",
    "{P} thinks the {food} at the {place} {is_} {taste} .",
    "{S} {eat} the {food} at the {place} and {it} {was} {very} {taste} .",
    "{S} bought {a_food} at the {place} because {it} {is_} {taste} .",
    "{S} like the {food} because {it} {is_} {taste} .",
    "{S} {eat} the {food} , and {it} {was} {taste} .",
    "when {S} {eat} the {food} {it} {was} {taste} .",
    "{P} {eat} the {food} and said {it} {was} {taste} .",
    "the {food} at the {place} {is_} always {taste} .",
    "{S} {eat} the {food} and {P} {eat} the {food2} .",
    "{S} {eat} the {food} with {P} {time} .",
    "{P} {make} {a_food} for the {place} .",
    "the {food} and the {food2} were both {taste} .",
]
# Every sentence that says "... ate the cake and it was ..." is left out, not only the
# running example itself: the model has to put that phrase together from pieces.
LEFT_OUT_PHRASE = "ate the cake and it was"


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def _taste(rng, kind: str) -> str:
    tastes = dict(KINDS[kind][1])
    if rng.random() < 0.08:  # a bad day in the kitchen: any food can disappoint
        tastes = BAD
    words, weights = list(tastes), np.array(list(tastes.values()), dtype=float)
    return words[int(rng.choice(len(words), p=weights / weights.sum()))]


def form(food: str) -> str:
    """``"mass"``, ``"plural"`` or ``"count"`` (singular and countable)."""
    return "mass" if food in MASS else "plural" if food in PLURAL else "count"


def article(word: str) -> str:
    """``"an"`` before a vowel sound, else ``"a"`` (every food here sounds as it is spelt)."""
    return "an" if word[0] in "aeiou" else "a"


def sentence(rng) -> str:
    kind = _pick(rng, list(KINDS))
    food = _pick(rng, KINDS[kind][0].split())
    template = _pick(rng, TEMPLATES)
    if "{food2}" in template and "both" in template:  # two foods of the same kind
        food2 = _pick(rng, [f for f in KINDS[kind][0].split() if f != food])
    else:  # any other food
        food2 = _pick(rng, [f for f in KINDS[_pick(rng, list(KINDS))][0].split() if f != food])
    plural, a = form(food) == "plural", article(food)
    text = template.format(
        S=_pick(rng, SUBJECTS),
        P=_pick(rng, PEOPLE),
        eat=_pick(rng, EAT),
        make=_pick(rng, MAKE),
        amount=_pick(rng, AMOUNT[form(food)]).format(a=a),
        food=food,
        a_food=f"{a} {food}" if form(food) == "count" else food,
        food2=food2,
        it="they" if plural else "it",
        was="were" if plural else "was",
        is_="are" if plural else "is",
        this="these" if plural else "this",
        taste=_taste(rng, kind),
        very=_pick(rng, VERY),
        time=_pick(rng, TIMES),
        place=_pick(rng, PLACES),
    )
    if text.startswith(("he like ", "she like ")):
        text = text.replace(" like ", " likes ", 1)
    return text


def corpus(n: int = N_SENTENCES, seed: int = SEED) -> list[str]:
    """``n`` different sentences, in the order the seeded generator first wrote them."""
    rng = np.random.default_rng(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        text = sentence(rng)
        if LEFT_OUT_PHRASE not in text:  # LEFT_OUT among them
            seen.setdefault(text)
    return list(seen)


def well_formed(s: str) -> bool:
    """Could :func:`sentence` have written ``s``? A template, its agreement, a taste of the kind.

    Each template becomes a pattern whose slots accept their own words; ``{taste}`` accepts
    the tastes of the sentence's kind of food and the tastes any food can have.
    """
    s = re.sub(r"^(he|she) likes ", r"\1 like ", s)
    kind_of = {f: kind for kind, (foods, _) in KINDS.items() for f in foods.split()}
    dish = next((w for w in s.split() if w in kind_of), None)  # the template's {food}
    if dish is None:
        return False
    kind, many, a = kind_of[dish], form(dish) == "plural", article(dish)
    slots = dict(S=SUBJECTS, P=PEOPLE, eat=EAT, make=MAKE, time=TIMES, place=PLACES, very=VERY)
    slots |= dict(food=[dish], taste=[*KINDS[kind][1], *BAD])
    slots |= dict(it=["they" if many else "it"], was=["were" if many else "was"])
    slots |= dict(is_=["are" if many else "is"], this=["these" if many else "this"])
    slots |= dict(amount=[x.format(a=a) for x in AMOUNT[form(dish)]])
    slots["a_food"] = [f"{a} {dish}" if form(dish) == "count" else dish]
    for template in TEMPLATES:
        same = "both" in template  # two foods of one kind
        slots["food2"] = [f for f in kind_of if f != dish and (kind_of[f] == kind or not same)]
        parts = re.split(r"\{(\w+)\}", template)  # text, slot, text, slot, ...
        rx = "".join(
            f"({'|'.join(map(re.escape, slots[x]))})" if i % 2 else re.escape(x)
            for i, x in enumerate(parts)
        )
        if re.fullmatch(rx, s):
            return True
    return False
