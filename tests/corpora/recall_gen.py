"""A recall benchmark of our own (issue 25): long conversations with planted facts.

LoCoMo is the acceptance set and is never fetched here. This generator
writes multi-session conversations between two people, with the facts a
question will need planted in some turns, chit-chat around them that
shares their words, and questions of five kinds, each naming the turns
that answer it (its evidence):

* single-hop: one turn answers it ("What is the name of Ana's cat?");
* multi-hop: two turns in different sessions ("Who is engaged to Ana's
  sister?": the sister's name, then her engagement);
* temporal: when something happened, said relative to the session's date
  ("last Tuesday" in a session of 8 May);
* open-domain: an inference from what was said ("Would Ana enjoy a cello
  concert?" from her learning the cello);
* adversarial: a question about the other person that only the first
  person's turn can show to be false ("What is the name of Ben's cat?").

``conversations(part)`` returns them for ``"tune"`` or ``"held-out"``. The
two parts share no person, place or name, and their questions are phrased
from two different lists of templates: a ranking tuned on one meets new
words and new question forms in the other.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

SEED = 25

NAMES = {
    "tune": [
        "Ana",
        "Ben",
        "Carla",
        "Dev",
        "Elif",
        "Femi",
        "Greta",
        "Hugo",
        "Ines",
        "Jonah",
        "Kai",
        "Lena",
        "Mateo",
        "Nadia",
        "Omar",
        "Priya",
        "Quinn",
        "Rosa",
        "Sami",
        "Tara",
    ],
    "held-out": [
        "Uma",
        "Victor",
        "Wen",
        "Xavi",
        "Yara",
        "Zane",
        "Aiko",
        "Bruno",
        "Chloe",
        "Dario",
        "Esme",
        "Farid",
        "Gwen",
        "Hassan",
        "Ivy",
        "Jorge",
        "Kira",
        "Luca",
        "Maya",
        "Niko",
    ],
}
POOLS = {
    "tune": {
        "animal": ["cat", "puppy", "rabbit", "parrot"],
        "pet": ["Miso", "Pepper", "Biscuit", "Luna", "Tofu", "Ziggy"],
        "job": ["nurse", "data analyst", "carpenter", "teacher", "chef"],
        "company": ["Brightwave", "Northpeak", "Halcyon Labs", "Orchard Health"],
        "city": ["Lisbon", "Denver", "Osaka", "Krakow", "Montreal"],
        "place": ["the Dolomites", "Yosemite", "the Lake District", "Patagonia"],
        "instrument": ["cello", "banjo", "saxophone"],
        "sibling": ["Marta", "Theo", "Nora", "Felix"],
        "partner": ["Jamal", "Sofia", "Arun", "Leah"],
        "food": ["sushi", "ramen", "tacos", "dumplings"],
        "book": ["The Overstory", "Piranesi", "Klara and the Sun"],
        "sport": ["climbing", "rowing", "fencing"],
    },
    "held-out": {
        "animal": ["dog", "kitten", "hamster", "tortoise"],
        "pet": ["Noodle", "Mango", "Pixel", "Olive", "Waffle", "Juniper"],
        "job": ["architect", "paramedic", "translator", "baker", "pilot"],
        "company": ["Bluefin", "Cedar & Co", "Lumen Works", "Redwood Bank"],
        "city": ["Seville", "Portland", "Nagoya", "Tallinn", "Perth"],
        "place": ["Zion", "the Highlands", "the Alps", "Torres del Paine"],
        "instrument": ["violin", "ukulele", "drums"],
        "sibling": ["Ivan", "Clara", "Rafa", "Hana"],
        "partner": ["Mei", "Tomas", "Keiko", "Samir"],
        "food": ["paella", "pho", "curry", "pierogi"],
        "book": ["Circe", "Project Hail Mary", "The Remains of the Day"],
        "sport": ["surfing", "judo", "cycling"],
    },
}

#: Facts: (kind, the turn that states it). {rel} is a day said relative to the session date.
FACTS = {
    "pet": "I adopted a {animal} named {pet} {rel}, she already owns the couch",
    "job": "I started a new job as a {job} at {company} {rel}",
    "move": "We signed the lease, we're moving to {city} at the end of the month",
    "hobby": "I've been taking {instrument} lessons every Thursday, my teacher is very patient",
    "sibling": "My {sib_rel} {sibling} lives in {city} now, she loves it there",
    "engaged": "Big news, {sibling} got engaged to {partner} over the weekend!",
    "trip": "We went hiking in {place} {rel}, the views were unreal",
    "food": "I've cut out meat completely, I cook a lot of {food} at home now",
    "book": "I finished reading {book} {rel}, I couldn't put it down",
    "sport": "I joined a {sport} club near the office, practice is on Mondays",
}
FILLER = [
    "How was your weekend? Mine was quiet, mostly cleaning the flat.",
    "Work has been hectic, so many meetings this week.",
    "I saw a great documentary about the ocean last night.",
    "The weather turned cold again, I had to dig out my winter coat.",
    "My neighbour's dog keeps barking at night, it's driving me mad.",
    "I tried a new coffee place near the station, pretty good.",
    "Did you watch the game on Sunday? What a finish.",
    "I'm thinking about repainting the kitchen, maybe a light green.",
    "Traffic was terrible this morning, I was late to work.",
    "We had a family dinner at my parents' place, lots of food.",
    "I've been sleeping badly, too much screen time probably.",
    "My friend recommended a podcast about history, I'm hooked.",
    "The city is so busy this time of year, tourists everywhere.",
    "I finally fixed the leaking tap in the bathroom.",
    "I need a holiday, maybe somewhere warm by the sea.",
    "Our team at work got a new manager, seems nice so far.",
    "I bought a plant for the balcony, hopefully it survives.",
    "Cooking dinner every night is exhausting, I want a break.",
    "I went to a birthday party on Saturday, danced all night.",
    "My phone screen cracked, I need to get it repaired.",
]
REPLIES = [
    "That's amazing, congratulations!",
    "Oh wow, tell me more.",
    "Haha, that sounds like you.",
    "I'm so happy for you.",
    "Sounds lovely, I'm a bit jealous.",
    "Good for you, that takes guts.",
]

#: Question templates per kind, two lists: one per part.
QUESTIONS = {
    "tune": {
        "pet": ("What is the name of {a}'s {animal}?", "When did {a} adopt {pet}?"),
        "job": ("Where does {a} work now?", "When did {a} start working at {company}?"),
        "move": ("Which city is {a} moving to?",),
        "hobby": ("Would {a} enjoy going to a {instrument} concert?",),
        "sibling-engaged": (
            "Who is {a}'s {sib_rel} engaged to?",
            "Who is going to marry {a}'s {sib_rel}?",
        ),
        "trip": ("When did {a} go hiking in {place}?",),
        "food": ("Would {a} order a steak at a restaurant?",),
        "book": ("Which book did {a} finish reading?",),
        "sport": ("What sport does {a} practise after work?",),
        "adversarial": ("What is the name of {b}'s {animal}?",),
    },
    "held-out": {
        "pet": (
            "What did {a} call the {animal} {a} adopted?",
            "On what date did {pet} join {a}'s home?",
        ),
        "job": (
            "Which company hired {a} as a {job}?",
            "What date did {a} begin the new {job} role?",
        ),
        "move": ("To what city will {a} relocate?",),
        "hobby": ("Is a {instrument} recital something {a} might like?",),
        "sibling-engaged": ("Who is the fiance of {a}'s {sib_rel}?",),
        "trip": ("On which day was {a}'s hike in {place}?",),
        "food": ("Is {a} likely to eat a burger?",),
        "book": ("What novel could {a} not put down?",),
        "sport": ("Which club did {a} join near the office?",),
        "adversarial": ("What did {b} name the {animal} {b} adopted?",),
    },
}
#: A question that names the day a fact spoke of (said as "last Tuesday" in its turn):
#: only the time the turn speaks of, read from it, can find it (issue 25, item 3).
DATED = {
    "tune": "What did {a} do on {date}?",
    "held-out": "What happened in {a}'s life on {date}?",
}
DATE_FORMAT = {"tune": "{m} {d}, {y}", "held-out": "{d} {m} {y}"}
KIND_OF = {
    "pet": ("single-hop", "temporal"),
    "job": ("single-hop", "temporal"),
    "move": ("single-hop",),
    "hobby": ("open-domain",),
    "sibling-engaged": ("multi-hop", "multi-hop"),
    "trip": ("temporal",),
    "food": ("open-domain",),
    "book": ("single-hop",),
    "sport": ("single-hop",),
    "adversarial": ("adversarial",),
}
KINDS = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")


@dataclass
class Turn:
    id: str  # "<conversation>:<session>:<n>"
    session: str
    day: date
    speaker: str
    text: str

    @property
    def memory(self) -> str:
        """The turn as it is stored: the speaker's name and what they said."""
        return f"{self.speaker}: {self.text}"


@dataclass
class Question:
    kind: str
    text: str
    evidence: list[str]  # turn ids
    answer: str


@dataclass
class Conversation:
    name: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def _relative(rng: random.Random, day: date) -> tuple[str, date]:
    back = rng.choice([1, 2, 3, 5, 7])
    said = {1: "yesterday", 2: "two days ago", 3: "three days ago", 7: "last week"}
    if back == 5:
        weekday = (day - timedelta(days=5)).strftime("%A")
        return f"last {weekday}", day - timedelta(days=5)
    return said[back], day - timedelta(days=back)


def conversation(rng: random.Random, part: str, name: str, a: str, b: str) -> Conversation:
    pools = POOLS[part]
    conv = Conversation(name)
    start = date(2023, 1, 2) + timedelta(days=rng.randrange(300))
    sessions = 8
    days = []
    d = start
    for _ in range(sessions):
        days.append(d)
        d += timedelta(days=rng.randint(3, 18))
    facts = rng.sample(sorted(FACTS), 7)
    if "sibling" in facts and "engaged" not in facts:
        facts.append("engaged")
    if "engaged" in facts and "sibling" not in facts:
        facts.append("sibling")
    # where each fact is said (the sibling before the engagement, in another session)
    placement: dict[str, int] = {f: rng.randrange(sessions) for f in facts}
    if "sibling" in facts:
        placement["sibling"] = rng.randrange(sessions - 2)
        placement["engaged"] = rng.randrange(placement["sibling"] + 1, sessions)
    values = {k: rng.choice(v) for k, v in pools.items()}
    values["sib_rel"] = "sister"
    said: dict[str, tuple[Turn, date | None]] = {}
    for s in range(sessions):
        sid = f"{name}:s{s + 1}"
        turns: list[tuple[str, str, str | None]] = []  # (speaker, text, fact)
        for _ in range(rng.randint(8, 12)):
            turns.append((rng.choice((a, b)), rng.choice(FILLER), None))
        for f in [f for f in facts if placement[f] == s]:
            turns.insert(rng.randrange(len(turns) + 1), (a, FACTS[f], f))
        for n, (speaker, template, fact) in enumerate(turns):
            rel_text, when = _relative(rng, days[s])
            text = template.format(**values, rel=rel_text)
            turn = Turn(f"{sid}:{n}", sid, days[s], speaker, text)
            conv.turns.append(turn)
            if fact:
                said[fact] = (turn, when if "{rel}" in template else days[s])
                reply = Turn(f"{sid}:{n}r", sid, days[s], b, rng.choice(REPLIES))
                conv.turns.append(reply)
    templates = QUESTIONS[part]
    for fact, (turn, when) in said.items():
        key = "sibling-engaged" if fact in ("sibling", "engaged") else fact
        if fact == "sibling":
            continue
        evidence = [turn.id]
        if key == "sibling-engaged":
            evidence = [said["sibling"][0].id, turn.id]
        for template, kind in zip(templates[key], KIND_OF[key], strict=False):
            q = template.format(a=a, b=b, **values)
            answer = when.isoformat() if kind == "temporal" and when else turn.text
            conv.questions.append(Question(kind, q, evidence, answer))
    for fact, (turn, when) in said.items():
        if "{rel}" in FACTS[fact] and when is not None:  # a question that names the day
            day = DATE_FORMAT[part].format(d=when.day, m=f"{when:%B}", y=when.year)
            q = DATED[part].format(a=a, date=day)
            conv.questions.append(Question("temporal", q, [turn.id], turn.text))
    if "pet" in said:
        q = templates["adversarial"][0].format(a=a, b=b, **values)
        conv.questions.append(Question("adversarial", q, [said["pet"][0].id], "(never said)"))
    return conv


def conversations(part: str, count: int = 60) -> list[Conversation]:
    """``count`` conversations of ``part`` ("tune" or "held-out"), the same every run."""
    rng = random.Random(f"{SEED}:{part}")
    names = NAMES[part]
    out = []
    for n in range(count):
        a, b = rng.sample(names, 2)
        out.append(conversation(rng, part, f"{part}{n:02d}", a, b))
    return out
