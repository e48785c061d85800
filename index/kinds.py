"""Words for kinds of things, and the things they name (issue 25: query expansion).

"What instrument does Tomas play?" is answered by "I played double bass at
uni": the question names the kind, the memory the thing. A search for a
kind word also looks for the common members of that kind (index/query.py
``text_parts``, specs/INDEX.md 3). The table is written from general
knowledge of everyday conversation (pets, sports, food, music, work,
family, travel), not from any corpus: a member is listed because people
name it when they talk about the kind, and a word that is mostly something
else (``bass`` the fish is rare beside the instrument; ``apple`` the
company beside the fruit) is kept only when the kind is its everyday sense.

Keys are the kind in its singular, casefolded; a query word matches a key
as written or without a plural ``s``/``es``/``ies`` ending. Members are
single words, as FTS5 reads them.
"""

from __future__ import annotations

from typing import Final

__all__ = ["KINDS", "MAX_MEMBERS", "members"]

#: At most this many member words are added to one search.
MAX_MEMBERS: Final = 24

_TABLE: Final = {
    "instrument": "guitar piano keyboard violin viola cello bass drums drum flute clarinet "
    "saxophone sax trumpet trombone ukulele harp harmonica accordion banjo mandolin organ "
    "oboe synth",
    "pet": "dog puppy cat kitten hamster rabbit bunny parrot budgie goldfish fish turtle "
    "tortoise guinea lizard gecko snake ferret horse pony",
    "animal": "dog puppy cat kitten hamster rabbit bird parrot horse pony cow sheep goat "
    "pig chicken duck fox deer bear wolf turtle snake lizard",
    "sport": "football soccer basketball baseball tennis golf rugby cricket hockey volleyball "
    "badminton squash swimming running cycling climbing boxing skiing snowboarding surfing "
    "rowing yoga karate judo",
    "game": "chess poker monopoly scrabble sudoku crossword minecraft fortnite zelda mario "
    "catan cards darts bowling",
    "hobby": "painting drawing knitting sewing gardening baking cooking photography "
    "pottery fishing hiking camping reading writing woodworking crochet birdwatching "
    "chess gaming climbing",
    "activity": "hiking camping swimming running cycling climbing painting reading cooking "
    "baking gardening dancing yoga fishing kayaking skiing pottery volunteering surfing "
    "sailing knitting photography",
    "event": "wedding party concert festival parade conference workshop race marathon "
    "fundraiser fair exhibition ceremony graduation reunion funeral gig match show rally "
    "meetup recital premiere",
    "vehicle": "car van truck bike bicycle motorbike motorcycle scooter bus camper "
    "caravan boat tractor",
    "car": "sedan hatchback suv estate convertible coupe van tesla toyota volkswagen "
    "ford honda bmw volvo audi",
    "colour": "red blue green yellow orange purple pink brown black white grey gray "
    "beige navy teal turquoise",
    "drink": "coffee tea beer wine water juice lemonade cocktail whisky whiskey gin "
    "vodka rum cider soda milk smoothie espresso latte",
    "fruit": "apple banana orange pear grape grapes strawberry strawberries cherry "
    "peach plum mango pineapple lemon lime melon watermelon kiwi",
    "vegetable": "carrot potato tomato onion garlic pepper cucumber lettuce spinach "
    "broccoli cabbage courgette zucchini aubergine eggplant peas beans",
    "dessert": "cake pie tart pudding cheesecake brownie brownies cookies biscuits "
    "icecream ice tiramisu mousse crumble",
    "pastry": "croissant croissants pie tart danish strudel eclair eclairs scone scones "
    "muffin muffins pretzel baklava",
    "snack": "crisps chips popcorn nuts pretzels crackers biscuits cookies chocolate fruit granola",
    "meal": "breakfast brunch lunch dinner supper barbecue picnic",
    "food": "pizza pasta burger sushi curry tacos noodles rice soup salad steak "
    "sandwich bread cheese",
    "cuisine": "italian french indian chinese japanese thai mexican greek spanish "
    "turkish korean vietnamese",
    "flower": "rose roses tulip tulips daisy daisies lily lilies sunflower sunflowers "
    "orchid orchids lavender peony peonies",
    "tree": "oak pine birch maple willow cherry apple olive palm elm beech",
    "wood": "oak pine birch maple walnut cherry cedar teak ash beech mahogany",
    "metal": "steel iron copper aluminium aluminum brass bronze silver gold tin",
    "fabric": "cotton wool silk linen denim leather polyester velvet",
    "genre": "jazz rock pop classical blues folk metal punk hiphop rap country reggae "
    "techno fantasy thriller romance mystery horror comedy drama sci-fi",
    "music": "jazz rock pop classical blues folk metal punk hiphop rap country reggae techno opera",
    "book": "novel novels memoir biography thriller fantasy romance mystery poetry",
    "art": "painting paintings drawing drawings sculpture pottery photography "
    "watercolour watercolor sketching ceramics",
    "dance": "salsa tango ballet waltz swing hiphop flamenco zumba",
    "language": "english spanish french german italian portuguese dutch chinese "
    "mandarin japanese korean arabic russian hindi polish swedish",
    "job": "teacher nurse doctor engineer developer programmer designer lawyer "
    "accountant chef cook manager writer artist driver electrician plumber "
    "carpenter architect scientist researcher student",
    "profession": "teacher nurse doctor engineer developer programmer designer lawyer "
    "accountant chef manager writer artist architect scientist researcher",
    "relative": "mother mum mom father dad sister brother aunt uncle cousin grandma "
    "grandmother grandpa grandfather niece nephew son daughter wife husband",
    "sibling": "sister brother twin",
    "parent": "mother mum mom father dad",
    "subject": "maths math mathematics physics chemistry biology history geography "
    "english literature art music economics philosophy",
    "degree": "bachelor master masters phd doctorate diploma",
    "season": "spring summer autumn fall winter",
    "weather": "rain sun snow wind storm fog heat cold sunny rainy",
    "furniture": "sofa couch chair table desk bed wardrobe shelf shelves bookcase "
    "dresser cabinet bench",
    "room": "kitchen bedroom bathroom living garage attic basement cellar study office hallway",
    "tool": "hammer saw drill screwdriver wrench spanner chisel sander plane",
    "clothing": "shirt dress jacket coat jeans trousers skirt sweater jumper hoodie "
    "boots shoes trainers sneakers scarf hat",
    "shoe": "boots trainers sneakers sandals heels loafers slippers",
    "transport": "train bus tram metro subway car bike bicycle plane flight ferry taxi",
    "holiday": "beach camping cruise skiing hiking roadtrip",
    "trip": "beach camping cruise skiing hiking roadtrip flight train",
    "exercise": "running jogging swimming cycling yoga pilates gym weights lifting "
    "walking hiking rowing",
    "plant": "tomato basil mint cactus fern succulent orchid rose herbs",
    "bird": "parrot budgie robin sparrow crow owl eagle hawk pigeon duck swan",
    "show": "series sitcom documentary drama",
    "film": "movie thriller comedy drama documentary horror animation",
    "movie": "film thriller comedy drama documentary horror animation",
}

#: kind -> its members (each a tuple of words), built from _TABLE.
KINDS: Final[dict[str, tuple[str, ...]]] = {k: tuple(v.split()) for k, v in _TABLE.items()}
_ALIASES: Final = {"color": "colour"}


def _key(word: str) -> str | None:
    w = word.casefold()
    w = _ALIASES.get(w, w)
    if w in KINDS:
        return w
    for ending, base in (("ies", "y"), ("es", ""), ("s", "")):
        if w.endswith(ending) and len(w) > len(ending) + 2:
            stem = w[: -len(ending)] + base
            stem = _ALIASES.get(stem, stem)
            if stem in KINDS:
                return stem
    return None


def members(words: list[str]) -> list[str]:
    """The member words of the kinds ``words`` name (in order, each once, none of
    ``words`` itself), at most MAX_MEMBERS."""
    given = {w.casefold() for w in words}
    out: list[str] = []
    for word in words:
        key = _key(word)
        if key is None:
            continue
        for m in KINDS[key]:
            if m not in given and m not in out:
                out.append(m)
    return out[:MAX_MEMBERS]
