"""English irregular verbs: the past forms a question's verb is told in (issue 25).

"When did Ruth's dahlias win?" is answered by "My dahlias won first prize"; "Where
did Kwame go?" by "I went to Edinburgh". FTS5's porter stemmer folds "wins",
"winning" and "win" together, but not "won": a question asks with "did" and the
base form, a conversation tells in the past. A search for a verb of this table
also looks for its past tense and past participle (index/query.py
``query_terms``; specs/INDEX.md 3).

The table is the common irregular verbs of English grammars, written from general
knowledge, not from any corpus. Forms that are mostly another word are left out
("left" is a side, "found" a verb of its own, "saw" a tool, "lay" a verb, "felt" a
cloth, "fell" a hill, "rose" a flower, "ground" the earth, "bound" an adjective,
"wound" an injury), and so are verbs that are mostly a noun ("bear", "ring",
"show", "sink", "tear", "light", "speed"), and "get", whose "got" is mostly "I've
got": they would find memories that do not tell the verb.
"""

from __future__ import annotations

from typing import Final

__all__ = ["PAST", "past_forms"]

_TABLE: Final = """
arise arose arisen
awake awoke awoken
be was were been
beat beaten
become became
begin began begun
bend bent
bet
bite bit bitten
bleed bled
blow blew blown
break broke broken
breed bred
bring brought
build built
burn burnt
buy bought
catch caught
choose chose chosen
cling clung
come came
cost
creep crept
cut
deal dealt
dig dug
do did done
draw drew drawn
dream dreamt
drink drank drunk
drive drove driven
eat ate eaten
feed fed
feel
fight fought
fly flew flown
forbid forbade forbidden
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
give gave given
go went gone
grow grew grown
hang hung
have had
hear heard
hide hid hidden
hit
hold held
hurt
keep kept
kneel knelt
know knew known
learn learnt
lend lent
let
lose lost
make made
meet met
pay paid
prove proven
put
quit
read
ride rode ridden
rise risen
run ran
say said
see seen
seek sought
sell sold
send sent
set
sew sewn
shake shook shaken
shine shone
shoot shot
shrink shrank shrunk
shut
sing sang sung
sit sat
sleep slept
slide slid
speak spoke spoken
spend spent
spin spun
split
spread
stand stood
steal stole stolen
stick stuck
sting stung
stink stank stunk
strike struck
swear swore sworn
sweep swept
swim swam swum
swing swung
take took taken
teach taught
tell told
think thought
throw threw thrown
understand understood
wake woke woken
wear wore worn
weave wove woven
weep wept
win won
write wrote written
"""

#: base form -> its past forms (those that differ from it), each once.
PAST: Final[dict[str, tuple[str, ...]]] = {
    words[0]: tuple(w for w in words[1:] if w != words[0])
    for words in (line.split() for line in _TABLE.strip().splitlines())
    if len(words) > 1
}


def past_forms(words: list[str]) -> list[str]:
    """The past forms of the verbs among ``words`` (casefolded base forms), in order, each
    once, none of ``words`` itself."""
    given = {w.casefold() for w in words}
    out: list[str] = []
    for word in words:
        for form in PAST.get(word.casefold(), ()):
            if form not in given and form not in out:
                out.append(form)
    return out
