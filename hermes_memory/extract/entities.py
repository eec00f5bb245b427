"""Find entity mentions in a sentence: known entities, people's relatives and pets, names, places, tools.

No model: known aliases, small gazetteers, capitalisation and cue words. Precision first: a
capitalised word at the start of a sentence counts only when it is known, in a gazetteer or a
common first name; days, months, interjections and chat acronyms are never entities.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from hermes_memory.extract.types import KnownEntities

# -- gazetteers -----------------------------------------------------------------------------------
_TECH = (
    "Python|JavaScript|TypeScript|Java|Kotlin|Swift|Rust|Golang|C++|C#|Ruby|PHP|Perl|Scala|Haskell|Elixir|"
    "Erlang|Clojure|SQL|SQLite|PostgreSQL|Postgres|MySQL|MongoDB|Redis|Kafka|GraphQL|HTML|CSS|React|Vue|"
    "Angular|Svelte|Django|Flask|FastAPI|Rails|Node.js|Node|TensorFlow|PyTorch|NumPy|Pandas|Kubernetes|"
    "Linux|Ubuntu|macOS|iOS|Android|Bash|WebAssembly|Rust|Lua|MATLAB|Fortran|COBOL|Terraform|Ansible|"
    "Elasticsearch|Spark|Hadoop|Arduino|Raspberry Pi|ChatGPT|GPT-4|Claude|LLaMA|SQLAlchemy|Pydantic|"
    "NetworkX|ChromaDB|Chroma|Qdrant|Nginx|Apache|AWS|Azure|GCP|Excel|Windows"
)
_TOOL = (
    "Docker|Git|GitHub|GitLab|VS Code|VSCode|Vim|Neovim|Emacs|Jupyter|Photoshop|Lightroom|Illustrator|"
    "Figma|Slack|Discord|Zoom|Notion|Trello|Jira|Blender|Unity|Unreal Engine|Chrome|Firefox|Safari|"
    "Instagram|YouTube|TikTok|Facebook|Twitter|Reddit|Pinterest|LinkedIn|WhatsApp|Snapchat|Twitch|"
    "Spotify|Netflix|Kindle|Duolingo|Strava|Fitbit|Google Docs|Google Maps|Canva|Procreate|Garmin|"
    "PlayStation|Xbox|Nintendo Switch|Nintendo|Steam|iPhone|iPad|MacBook|Goodreads|Etsy|Patreon|Uber|Airbnb"
)
_ORG = (
    "Google|Apple|Microsoft|Amazon|Meta|IBM|Intel|Nvidia|Tesla|OpenAI|Anthropic|NASA|UN|UNICEF|Red Cross|"
    "Starbucks|Walmart|Costco|Nike|Adidas|Disney|Pixar|Marvel|BBC|CNN|NBA|NFL|NHL|MLB|FIFA|NCAA|UEFA|"
    "Harvard|Stanford|MIT|Oxford|Cambridge|Yale|Princeton|Berkeley|UCLA|NYU|Habitat for Humanity|YMCA|"
    "Boy Scouts|Girl Scouts|Peace Corps|Greenpeace|Salvation Army|IKEA|McDonald's|Target|Home Depot"
)
_PLACE = (
    "Africa|Asia|Europe|North America|South America|Australia|Antarctica|America|USA|US|UK|U.S.|NYC|LA|"
    "United States|United Kingdom|Canada|Mexico|Brazil|Argentina|Chile|Peru|Colombia|Cuba|Jamaica|"
    "England|Scotland|Wales|Ireland|France|Germany|Spain|Portugal|Italy|Greece|Netherlands|Belgium|"
    "Switzerland|Austria|Sweden|Norway|Denmark|Finland|Iceland|Poland|Ukraine|Russia|Turkey|Egypt|"
    "Morocco|Kenya|Nigeria|South Africa|Ethiopia|Israel|India|Pakistan|China|Japan|Korea|South Korea|"
    "Vietnam|Thailand|Indonesia|Philippines|Singapore|Malaysia|New Zealand|Hawaii|Alaska|California|"
    "Texas|Florida|New York|Washington|Oregon|Colorado|Arizona|Nevada|Utah|Michigan|Ohio|Illinois|"
    "Georgia|Virginia|Carolina|North Carolina|South Carolina|Tennessee|Kentucky|Massachusetts|Maine|"
    "Vermont|Minnesota|Wisconsin|Iowa|Kansas|Missouri|Louisiana|Alabama|Montana|Idaho|Wyoming|Pennsylvania|"
    "New Jersey|Connecticut|Maryland|Boston|Chicago|Seattle|Portland|Denver|Austin|Dallas|Houston|Miami|"
    "Atlanta|Phoenix|San Francisco|Los Angeles|San Diego|Las Vegas|Nashville|Philadelphia|Detroit|"
    "Toronto|Vancouver|Montreal|London|Paris|Berlin|Munich|Madrid|Barcelona|Rome|Milan|Venice|Florence|"
    "Amsterdam|Vienna|Prague|Stockholm|Oslo|Copenhagen|Dublin|Edinburgh|Lisbon|Athens|Istanbul|Moscow|"
    "Tokyo|Kyoto|Osaka|Seoul|Beijing|Shanghai|Hong Kong|Taipei|Bangkok|Bali|Mumbai|Delhi|Sydney|"
    "Melbourne|Cairo|Dubai|Rio|Grand Canyon|Yellowstone|Yosemite|Niagara Falls|Central Park|Disneyland|"
    "New York City|Midwest|Pacific Northwest|East Coast|West Coast|Himalayas|Alps|Rockies|Caribbean|"
    "Mediterranean|Middle East|Scandinavia|Southeast Asia|Bay Area|Silicon Valley"
)
_EVENT = (
    "Christmas|Christmas Day|Christmas Eve|Boxing Day|Thanksgiving|Halloween|Easter|Easter Sunday|Hanukkah|"
    "Diwali|Ramadan|Eid|New Year|New Year's|New Year's Day|Labor Day|Labour Day|Memorial Day|"
    "New Year's Eve|Valentine's Day|Mother's Day|Father's Day|Independence Day|Fourth of July|"
    "Super Bowl|Olympics|World Cup|Comic-Con|Pride|Pride Month|Burning Man|Coachella"
)
_CONCEPT = (
    "LGBTQ|LGBT|LGBTQ+|LGBTQIA+|AI|English|Spanish|French|German|Italian|Portuguese|Chinese|Mandarin|"
    "Cantonese|Japanese|Korean|Russian|Arabic|Hindi|Dutch|Swedish|Greek|Latin|Hebrew|Irish|American|"
    "British|European|Asian|African|Canadian|Mexican|Midwestern|Buddhism|Christianity|Islam|Judaism|Yoga"
)
# Famous works and franchises: without this "Harry Potter" reads as a person.
_WORK = (
    "Harry Potter|Star Wars|Star Trek|Game of Thrones|Lord of the Rings|The Lord of the Rings|The Hobbit|"
    "Hobbit|Spider-Man|Iron Man|Batman|Superman|Pokemon|Pokémon|Minecraft|Fortnite|Zelda|Super Mario|"
    "The Witcher|Breaking Bad|Stranger Things|The Office|Hamilton|Frozen|Toy Story"
)
_FIRST_NAMES = frozenset(
    """
    aaron abby adam adrian aiden alan albert alex alexa alexander alice alicia allison amanda amber amelia
    amy ana andrea andrew andy angela anna anne anthony antonio ashley audrey austin ava barbara ben benjamin
    beth betty bill billy blake bob bobby brad brandon brenda brian brittany brooke bruce bryan caleb cameron
    carl carla carlos carol caroline carter catherine charles charlie charlotte chloe chris christian
    christina christine christopher cindy claire colin connor craig crystal cynthia daisy dan daniel danielle
    david debbie deborah dennis derek diana diane donald donna doris dorothy dylan ed edward elena eli
    elijah elizabeth ella ellie emily emma eric erica erin ethan eva evan evelyn frank gabriel gary george
    gina grace greg gregory hailey hannah harry heather helen henry holly ian isaac isabella jack jackson
    jacob jake james jamie jane janet jason jay jeff jennifer jenny jeremy jerry jess jessica jill jim jimmy
    joan joanna joe joel john johnny jon jonathan jordan jose joseph josh joshua joy joyce juan judy julia
    julie justin karen kate katherine kathleen kathy katie kayla keith kelly ken kevin kim kimberly kyle
    laura lauren leah leo liam lily linda lisa liz logan lori louis lucas lucy luis luke lydia madison maria
    mark martha martin mary mason matt matthew maya megan mel melanie melissa mia michael michelle mike
    molly monica nancy naomi natalie nate nathan nicholas nick nicole noah nora olivia oliver owen pam
    patricia patrick paul peter philip rachel ralph ray rebecca richard rick rob robert robin ron ronald
    rose ruby russell ryan sam samantha samuel sandra sara sarah scott sean sharon shawn sophia sophie
    stephanie stephen steve steven sue susan tom tony travis tyler valerie victoria vincent walter wayne
    william zach zoe
    """.split()
)
# Capitalised words that are never an entity on their own (sentence starters, interjections, chat).
_CAP_STOP = frozenset(
    """
    i i'm i've i'd i'll im ive the a an this that these those my your our his her their its it it's we you
    he she they me us them there here what where who why how which when whatever hey hi hello thanks thank
    wow oh yeah yes no ok okay lol haha omg btw tbh imo imho idk fyi asap aww awww ah hmm um well so and but
    or if sure great good nice cool awesome congrats congratulations bye sorry please yep yup nope totally
    definitely absolutely also just really actually anyway anyways besides plus then now today tomorrow
    yesterday tonight monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov
    dec god gosh dear love haha hahaha lmao ugh yay woohoo aw hope glad let let's gonna wanna
    gotta not never always maybe perhaps speaking anyhow cheers ps pm am tv ceo cto phd mba diy dj bbq rv
    gps ptsd adhd ocd brb ttyl xoxo am pm vs etc ty thx np yo sup true right exactly agreed happy merry
    is are was were do does did have has had can could would should will go see remember adding during
    learning look check keep try get make take tell guess imagine think speaking talking anytime woah whoa
    hah phew ooh oops huh mon tue tues wed thu thur thurs fri sat sun whats hows nah omw diys lmk
    false none null nil undefined nan probably hopefully unfortunately luckily apparently basically
    morning on in at for from with by after before during since until into about over cli api url ui ux
    os hike visit
    """.split()
)
_TITLES = frozenset("mr mrs ms dr prof professor aunt uncle grandma grandpa coach officer sir madam".split())
_DOT_PREFIX = _TITLES | {"st", "mt", "ft"}
_ORG_SUFFIX = frozenset(
    """inc corp corporation llc ltd company co university college school academy institute hospital clinic
    foundation association society club bank group agency center centre church studio studios labs lab
    council committee department ministry league team shelter network""".split()
)
_PLACE_SUFFIX = frozenset(
    """city town village street st avenue ave road rd park lake river mountain mountains mount mt beach
    canyon falls island islands county state valley bay coast hills hill forest trail square bridge
    museum zoo gardens garden harbor harbour peak springs creek parkway highway boulevard blvd plaza pier
    pass glacier""".split()
)
_EVENT_SUFFIX = frozenset(
    "festival conference con expo parade fair summit marathon concert gala tournament".split()
)
_PROJECT_CUE = frozenset({"project", "app", "repo", "library", "package", "startup"})
# "a CLI called Tidepool", "an app named Tally": what is being built, named.
_NAMED_PROJECT_CUE = _PROJECT_CUE | {"cli", "tool", "website", "site", "bot", "game", "plugin", "service"}
_PLACE_CUE = frozenset(
    "in from near visit visited visiting across through toward towards via around along".split()
)
# "to X" is a place only after a verb of motion ("said goodbye to Max" is not).
_MOTION = frozenset(
    "moved move moving went go going gone flew fly drove drive travelled traveled travel trip trips headed "
    "heading relocated relocate back flying driving sailed sailing returned returning home commute "
    "commuting".split()
)

_KIN: dict[str, str] = {}
for _pred, _words in (
    ("sibling_of", "sister sisters brother brothers sibling siblings"),
    ("child_of", "mom mother mum mommy mama dad father daddy papa parents stepmom stepdad"),
    ("parent_of", "son sons daughter daughters kid kids child children"),
    ("married_to", "husband wife spouse"),
    ("partner_of", "partner boyfriend girlfriend fiance fiancé fiancee fiancée"),
    ("friend_of", "friend friends bff buddy pal bestie"),
    (
        "relative_of",
        "grandma grandmother grandpa grandfather grandparents granny nana grandson "
        "granddaughter grandkids grandchildren aunt uncle cousin cousins niece nephew family",
    ),
    ("colleague_of", "coworker coworkers co-worker colleague colleagues boss manager teammate teammates"),
    (
        "knows",
        "classmate classmates roommate roommates neighbor neighbors neighbour neighbours mentor "
        "teacher coach therapist",
    ),
    (
        "has_pet",
        "dog dogs cat cats puppy puppies pup kitten kittens pet pets horse horses bunny rabbit "
        "hamster parrot bird fish turtle turtles snake",
    ),
):
    for _w in _words.split():
        _KIN[_w] = _pred
_NEXT_WORD = re.compile(r"\s+([a-z]+)")
_COMPOUND_HEADS = frozenset(
    """painting paintings photo photos picture pictures pic pics drawing portrait food toy toys bed walker
    park show group chat tree name names doctor vet business reunion trip vacation dinner house home recipe
    recipes members member time day stuff sculpture collection sitter sitting training videos video account
    page room friend friends""".split()
)
_KIN_MODIFIERS = (
    "best|older|younger|little|big|baby|twin|eldest|oldest|youngest|late|step|new|dear|two|three|whole|entire"
)
_KIN_KEEP = frozenset({"best", "older", "younger", "little", "big", "twin", "eldest", "oldest", "youngest"})
_STANDALONE_KIN = {
    "Mom": "mom",
    "Dad": "dad",
    "Mum": "mum",
    "Mommy": "mom",
    "Daddy": "dad",
    "Grandma": "grandma",
    "Grandpa": "grandpa",
    "Nana": "nana",
}
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
_SECOND_PERSON = frozenset({"you", "your", "yours", "yourself"})
_CONNECTORS = frozenset({"of", "the", "de", "la", "del", "da", "von", "van", "&"})

# Structured data (JSON, key=value, a Python repr): its quoted strings and capitalised words are values.
_DATA = re.compile(r"[\"'”]\s*:\s*[\"'\[{\dtfn]|[{\[]\s*[\"']|\w=\S")
_QUOTED = re.compile(r"[\"“]([A-Z][^\"”\n]{0,60}?[^\s\"”.,!?])[.,!?]?[\"”]")
_TOKEN = re.compile(r"[^\W_][\w'’.+#&-]*")
_NAME_RE = r"[A-Z][a-z'’\-]{1,20}"


@dataclass(slots=True)
class Mention:
    """One mention inside a message (absolute offsets)."""

    name: str
    entity_type: str
    start: int
    end: int
    confidence: float
    known: bool = False
    owner: str | None = None
    role: str | None = None
    kin_predicate: str | None = None
    aliases: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EntityContext:
    """Who "I", "you" and "the user" are, and what is already known."""

    speaker: str
    addressee: str | None
    known: KnownEntities
    user: str | None = None


@functools.cache
def _gazetteer() -> dict[str, tuple[str, str]]:
    """lower-cased surface -> (canonical spelling, entity type)."""
    table: dict[str, tuple[str, str]] = {}
    for entity_type, names in (
        ("other", _WORK),
        ("concept", _CONCEPT),
        ("event", _EVENT),
        ("place", _PLACE),
        ("org", _ORG),
        ("tool", _TOOL),
        ("tech", _TECH),
    ):
        for name in names.split("|"):
            table[name.lower()] = (name, entity_type)
    return table


# Whose relative or pet: "my", "our", "your", and "the user's" (how notes about the user are written).
_POSSESSOR = r"(?P<poss>[Mm]y|[Oo]ur|[Yy]our|(?:[Tt]he\s+)?[Uu]ser['’]s)"


@functools.cache
def _kin_words() -> str:
    return "|".join(sorted((re.escape(k) for k in _KIN), key=len, reverse=True))


@functools.cache
def _kin_pattern() -> re.Pattern[str]:
    # "my dog Biscuit", "my dog, Biscuit", "my dog named Biscuit", "my dog is called Biscuit",
    # "my dog's name is Biscuit", "my sisters Anna and Eva".
    return re.compile(
        rf"\b{_POSSESSOR}\s+(?P<mods>(?:(?:{_KIN_MODIFIERS})\s+){{0,2}})(?P<kin>{_kin_words()})\b"
        rf"(?:(?:,?\s+(?:(?:named|called)\s+)?|\s+(?:is|was)\s+(?:named|called)\s+|['’]s\s+name\s+is\s+)"
        rf"(?P<n1>{_NAME_RE})(?:\s+and\s+(?P<n2>{_NAME_RE}))?\b)?"
    )


@functools.cache
def _appositive_kin_pattern() -> re.Pattern[str]:
    # "Biscuit, my dog, ...", "Biscuit is my dog", "Anna is the user's sister".
    return re.compile(
        rf"\b(?P<n1>{_NAME_RE})(?:,\s+|\s+(?:is|was)\s+)(?:also\s+)?{_POSSESSOR}\s+"
        rf"(?P<mods>(?:(?:{_KIN_MODIFIERS})\s+){{0,2}})(?P<kin>{_kin_words()})\b"
    )


# Breeds and kinds that name a pet's species: "a beagle named Biscuit" is a dog.
_BREEDS = {
    **dict.fromkeys(
        """beagle labrador lab retriever poodle terrier husky corgi dachshund spaniel shepherd bulldog
        chihuahua pug collie boxer greyhound whippet schnauzer rottweiler doberman dalmatian pomeranian
        shih-tzu maltese mutt""".split(),
        "dog",
    ),
    **dict.fromkeys("tabby siamese persian ragdoll sphynx bengal kitty".split(), "cat"),
}
_PLURAL_PETS = {"puppies": "puppy", "kittens": "kitten", "bunnies": "bunny", "fish": "fish"}


def _species(word: str) -> str:
    """The role a pet word gives its named pet: "beagle" -> "dog", "cats" -> "cat"."""
    low = word.lower()
    if low in _BREEDS:
        return _BREEDS[low]
    if low in _PLURAL_PETS:
        return _PLURAL_PETS[low]
    return low[:-1] if low.endswith("s") and low[:-1] in _KIN else low


@functools.cache
def _named_pet_pattern() -> re.Pattern[str]:
    # "a puppy named Max", "a beagle called Biscuit", "two cats, Pixel and Nova".
    words = [*(w for w, p in _KIN.items() if p == "has_pet"), *_BREEDS]
    pets = "|".join(sorted(words, key=len, reverse=True))
    return re.compile(
        rf"\b(?:a|an|the|new|two|three|four)\s+(?:\w+\s+)?(?P<kin>{pets})"
        rf"(?:\s+(?:named|called)\s+|,\s+(?=[A-Z]\w*(?:,?\s+and\s+[A-Z]|[.!?]|$)))"
        rf"(?P<n1>{_NAME_RE})(?:,?\s+and\s+(?P<n2>{_NAME_RE}))?\b"
    )


# The speaker has the pet named next: "I adopted a ...", "We've got two cats, ...".
_FIRST_PERSON_HAS = re.compile(
    r"\b(?:I|[Ww]e)(?:['’]ve)?(?:\s+(?:just|finally|recently|also|now|still|already|got|have|had))*\s+"
    r"(?:have|has|had|got|adopted|rescued|own|owned|bought|found|took\s+in|brought\s+home)\s+[^.!?]*$"
)


def _tokens(text: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _TOKEN.finditer(text):
        word, start = m.group(), m.start()
        if word[-1] in "'’.-&":
            word = word.rstrip("'’.-&")
        end = start + len(word)
        if word.endswith(("'s", "’s")) and len(word) > 2:
            word, end = word[:-2], end - 2
        out.append((word, start, end))
    return out


def _is_name_word(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in _CAP_STOP and not word.isdigit()


def _people(ctx: EntityContext) -> dict[str, str]:
    people: dict[str, str] = {}
    for name in (ctx.speaker, ctx.addressee):
        if name and not name.startswith("the "):
            people[name.casefold()] = name
            first = name.split()[0]
            people.setdefault(first.casefold(), name)
    return people


def _owner(possessive: str, ctx: EntityContext) -> str | None:
    low = possessive.lower()
    if low == "your":
        return ctx.addressee
    if low.endswith(("user's", "user’s")):
        return ctx.user or "the user"
    return ctx.speaker


def _kin_mentions(text: str, offset: int, ctx: EntityContext, taken: bytearray) -> list[Mention]:
    mentions: list[Mention] = []
    for m in _appositive_kin_pattern().finditer(text):
        owner = _owner(m.group("poss"), ctx)
        name = m.group("n1")
        if owner is None or not _is_name_word(name) or name.casefold() == owner.casefold():
            continue
        mentions.append(_named_kin(m, "n1", owner, offset))
        _take(taken, m.start(), m.end())
    for m in _kin_pattern().finditer(text):
        if not _free(taken, m.start(), m.span("kin")[1]):
            continue
        owner = _owner(m.group("poss"), ctx)
        following = _NEXT_WORD.match(text, m.span("kin")[1])
        if owner is None or (following and following.group(1).lower() in _COMPOUND_HEADS):
            continue  # "my horse painting", "my family photo": the relative only qualifies a thing
        names = [key for key in ("n1", "n2") if m.group(key) and _is_name_word(m.group(key))]
        if names:
            for key in names:
                mentions.append(_named_kin(m, key, owner, offset))
                _take(taken, *m.span(key))
        else:
            s, e = m.span("poss")[0], m.span("kin")[1]
            mentions.append(_relational(m, owner, s + offset, e + offset, ctx))
        _take(taken, m.start(), m.span("kin")[1])
    for m in _named_pet_pattern().finditer(text):
        owned = _FIRST_PERSON_HAS.search(text, 0, m.start()) is not None
        role = _species(m.group("kin"))
        for key in ("n1", "n2"):
            name = m.group(key)
            if name is None:
                continue
            s, e = m.span(key)
            if not (_free(taken, s, e) and _is_name_word(name)):
                continue
            if owned:  # "I adopted a beagle named Biscuit": the speaker's dog, "my dog" from now on
                mentions.append(
                    Mention(name, "pet", s + offset, e + offset, 0.8, owner=ctx.speaker, role=role,
                            kin_predicate="has_pet", aliases=[f"{ctx.speaker}'s {role}"])
                )  # fmt: skip
            else:
                mentions.append(Mention(name, "pet", s + offset, e + offset, 0.75))
            _take(taken, s, e)
    return mentions


def _role(m: re.Match[str]) -> tuple[str, str]:
    """(role, predicate) of a kin match: ("best friend", "friend_of")."""
    kin = m.group("kin").lower()
    mods = [w for w in m.group("mods").lower().split() if w in _KIN_KEEP]
    return " ".join([*mods, kin]), _KIN[kin]


def _named_kin(m: re.Match[str], key: str, owner: str, offset: int) -> Mention:
    """A named relative or pet ("my dog Biscuit"), known also as "<owner>'s dog"."""
    role, predicate = _role(m)
    s, e = m.span(key)
    return Mention(
        m.group(key),
        "pet" if predicate == "has_pet" else "person",
        s + offset,
        e + offset,
        0.8,
        owner=owner,
        role=role,
        kin_predicate=predicate,
        aliases=[f"{owner}'s {role}"],
    )


def _relational(m: re.Match[str], owner: str, start: int, end: int, ctx: EntityContext) -> Mention:
    """An unnamed relative or pet ("my dog"): the named one it is known as, else "<owner>'s dog"."""
    role, predicate = _role(m)
    entity_type = "pet" if predicate == "has_pet" else "person"
    relational = f"{owner}'s {role}"
    known = ctx.known.get(relational)
    if (
        known is not None
        and not ctx.known.is_ambiguous(relational)
        and known.name.casefold() != relational.casefold()
    ):
        # "my dog" after "my dog is called Biscuit": Biscuit, whose alias this is.
        return Mention(
            known.name, known.entity_type, start, end, 0.9, known=True, owner=owner, role=role,
            kin_predicate=predicate,
        )  # fmt: skip
    return Mention(relational, entity_type, start, end, 0.8, owner=owner, role=role, kin_predicate=predicate)


def _take(taken: bytearray, start: int, end: int) -> None:
    taken[start:end] = b"\x01" * (end - start)


def _free(taken: bytearray, start: int, end: int) -> bool:
    return taken.find(1, start, end) < 0


def find_entities(text: str, offset: int, ctx: EntityContext) -> list[Mention]:
    """Entity mentions in one sentence; offsets are shifted by ``offset`` (the sentence start)."""
    taken = bytearray(len(text))
    mentions = _kin_mentions(text, offset, ctx, taken)
    data = _DATA.search(text) is not None  # in data, an unknown capitalised word is a value, not a name
    # A quoted title is one name ("Charlotte's Web"); quoted values in data ({"message": "Entry added"})
    # and quoted sentences are not.
    for m in [] if data else _QUOTED.finditer(text):
        s, e = m.span(1)
        if _free(taken, s, e) and thing_name_problem(m.group(1)) is None:
            mentions.append(Mention(m.group(1), "other", s + offset, e + offset, 0.6))
            _take(taken, s, e)
    tokens = _tokens(text)
    people = _people(ctx)
    gazetteer = _gazetteer()
    i = 0
    while i < len(tokens):
        word, start, end = tokens[i]
        low = word.lower()
        if not _free(taken, start, end):
            i += 1
            continue
        if low in _FIRST_PERSON or low in _SECOND_PERSON:
            who = ctx.speaker if low in _FIRST_PERSON else ctx.addressee
            if who is not None:
                mentions.append(Mention(who, "person", start + offset, end + offset, 1.0, known=True))
            i += 1
            continue
        found = _match_known(text, tokens, i, people, ctx.known, gazetteer)
        if found is not None:
            mention, used = found
            mention.start += offset
            mention.end += offset
            mentions.append(mention)
            _take(taken, tokens[i][1], tokens[i + used - 1][2])
            i += used
            continue
        if word in _STANDALONE_KIN:
            role = _STANDALONE_KIN[word]
            mentions.append(
                Mention(
                    f"{ctx.speaker}'s {role}",
                    "person",
                    start + offset,
                    end + offset,
                    0.7,
                    owner=ctx.speaker,
                    role=role,
                    kin_predicate=_KIN[role],
                )
            )
            i += 1
            continue
        if not data and (
            _is_name_word(word)
            or (word.isupper() and 2 <= len(word) <= 5 and word[0].isalpha() and low not in _CAP_STOP)
        ):
            used, name = _capitalised(text, tokens, i, people)
            if name is not None:
                name.start += offset
                name.end += offset
                mentions.append(name)
            i += max(used, 1)
            continue
        i += 1
    return mentions


@functools.cache
def _gazetteer_first_words() -> dict[str, int]:
    firsts: dict[str, int] = {}
    for key in _gazetteer():
        first = key.split(" ", 1)[0]
        firsts[first] = max(firsts.get(first, 0), key.count(" ") + 1)
    return firsts


def _match_known(
    text: str,
    tokens: list[tuple[str, int, int]],
    i: int,
    people: dict[str, str],
    known: KnownEntities,
    gazetteer: dict[str, tuple[str, str]],
) -> tuple[Mention, int] | None:
    """The longest known/gazetteer surface starting at token i, as (mention, tokens used)."""
    first = tokens[i][0].casefold()
    longest = max(
        known.first_words.get(first, 0),
        _gazetteer_first_words().get(first, 0),
        2 if first in people else 0,
        1 if any(key.startswith(first) for key in people) and tokens[i][0][:1].isupper() else 0,
    )
    if longest == 0:
        return None
    for size in range(min(longest, len(tokens) - i), 0, -1):
        words = [t[0] for t in tokens[i : i + size]]
        if size > 1 and not _adjacent(text, tokens, i, size):
            continue
        surface = " ".join(words)
        key = surface.casefold()
        start, end = tokens[i][1], tokens[i + size - 1][2]
        if key in people and words[0][:1].isupper():
            return Mention(people[key], "person", start, end, 1.0, known=True), size
        nickname = _nickname(words, people) if size == 1 else None
        if nickname is not None:  # "Mel" for Melanie, "Jo" for Joanna
            return Mention(nickname, "person", start, end, 0.9, known=True, aliases=[words[0]]), 1
        entity = known.get(surface)
        # A proper name only links to a capitalised mention ("Will" the person is not "I will").
        if entity is not None and (words[0][:1].isupper() or not entity.name[:1].isupper()):
            return Mention(
                entity.name,
                entity.entity_type,
                start,
                end,
                0.95,
                known=True,
                aliases=[surface] if surface != entity.name else [],
            ), size
        hit = gazetteer.get(key)
        if (
            hit is not None
            and _gazetteer_case_ok(surface, hit[0], hit[1])
            and not _named_after(tokens, i + size)
        ):
            return Mention(hit[0], hit[1], start, end, 0.85), size
    return None


def _named_after(tokens: list[tuple[str, int, int]], j: int) -> bool:
    """Whether token j ends a longer name the gazetteer word starts: "Boston Marathon", "Oxford Street"."""
    if j >= len(tokens) or not _is_name_word(tokens[j][0]) or tokens[j][1] - tokens[j - 1][2] != 1:
        return False
    last = tokens[j][0].lower()
    return last in _EVENT_SUFFIX or last in _ORG_SUFFIX or last in _PLACE_SUFFIX


def _nickname(words: list[str], people: dict[str, str]) -> str | None:
    """The one participant whose first name starts with this capitalised word, if exactly one does."""
    word = words[0]
    if len(word) < 2 or not word.isalpha() or not word[0].isupper() or word.lower() in _CAP_STOP:
        return None
    low = word.lower()
    found = {
        name for key, name in people.items() if " " not in key and key.startswith(low) and len(key) > len(low)
    }
    return found.pop() if len(found) == 1 else None


def _gazetteer_case_ok(surface: str, canonical: str, entity_type: str) -> bool:
    """ "US"/"WHO" only in capitals; most names capitalised; a few tech names also in lower case."""
    if canonical.isupper() and len(canonical) <= 4:
        return surface == canonical
    if surface[:1].isupper():
        return True
    return entity_type in ("tech", "tool") and surface.casefold() in _LOWER_OK


# Gazetteer names that are unambiguous in lower case ("python" is rarely the snake in chat about code).
_LOWER_OK = frozenset(
    "python javascript typescript docker kubernetes github gitlab postgres postgresql mysql sqlite redis "
    "numpy pytorch tensorflow django fastapi vscode linux ubuntu jupyter graphql mongodb".split()
)


def _adjacent(text: str, tokens: list[tuple[str, int, int]], i: int, size: int) -> bool:
    return all(text[tokens[j][2] : tokens[j + 1][1]] in (" ", "'s ", "’s ") for j in range(i, i + size - 1))


def _capitalised(
    text: str,
    tokens: list[tuple[str, int, int]],
    i: int,
    people: dict[str, str] | None = None,
) -> tuple[int, Mention | None]:
    """Group a run of capitalised tokens from i into one name and type it; returns (tokens used, mention)."""
    people = people or {}
    if tokens[i][0].isupper() and (_shouting(tokens, i) or len(tokens[i][0]) > 5):
        return 1, None  # "JUST DOING IT", "INTENSE": emphasis, not an acronym
    j = i + 1
    while j < len(tokens) and _gap_ok(text, tokens, j):
        word = tokens[j][0]
        if word.casefold() in people:
            break  # "Woah Joanna": the participant's name starts a mention of its own
        if _is_name_word(word):
            j += 1
            continue
        # "Bank of America", "Lord of the Rings": connectors only between two name words.
        k = j
        while (
            k < len(tokens) and k - j < 2 and tokens[k][0].lower() in _CONNECTORS and _gap_ok(text, tokens, k)
        ):
            k += 1
        if k > j and k < len(tokens) and _is_name_word(tokens[k][0]) and _gap_ok(text, tokens, k):
            j = k + 1
        else:
            break
    words = [t[0] for t in tokens[i:j]]
    used = j - i
    start, end = tokens[i][1], tokens[j - 1][2]
    sentence_initial = i == 0 or text[:start].rstrip()[-1:] in _SENTENCE_OPENERS
    prev = tokens[i - 1][0].lower() if i > 0 else ""
    prev2 = tokens[i - 2][0].lower() if i > 1 else ""
    entity_type, confidence = _type_of(words, prev, prev2)
    if sentence_initial and entity_type == "other" and used == 1:
        return used, None  # a lone capitalised sentence starter is an ordinary word
    if len(words) == 1 and (len(words[0]) < 2 or words[0].lower() in _TITLES):
        return used, None
    return used, Mention(" ".join(text[start:end].split()), entity_type, start, end, confidence)


_SENTENCE_OPENERS = ("", ":", "(", "-", "—", ".", "!", "?", '"', "“")


def _gap_ok(text: str, tokens: list[tuple[str, int, int]], j: int) -> bool:
    """Whether token j follows token j-1 within one name (a single space, or "Dr. " / "St. ")."""
    gap = text[tokens[j - 1][2] : tokens[j][1]]
    if gap in ("'s ", "’s "):  # "St. Mary's Hospital"
        return _is_name_word(tokens[j][0])
    return gap == " " or (gap == ". " and tokens[j - 1][0].lower() in _DOT_PREFIX)


def _shouting(tokens: list[tuple[str, int, int]], i: int) -> bool:
    neighbours = [tokens[k][0] for k in (i - 1, i + 1) if 0 <= k < len(tokens)]
    return any(len(w) > 1 and w.isupper() for w in neighbours)


_PLACE_PREFIX = frozenset("lake mount mt fort port san santa saint camino".split())
# "on the Spree", "along the Danube": a name after "the" and a preposition of place.
_PLACE_AFTER_THE = frozenset("on along across around near beside over".split())


def _type_of(words: list[str], prev: str, prev2: str) -> tuple[str, float]:
    """Entity type of an unknown capitalised name from its words and the two words before it."""
    first, last = words[0].lower().rstrip("."), words[-1].lower().rstrip(".")
    if first in _TITLES and len(words) > 1:
        return "person", 0.8
    if last in _ORG_SUFFIX or first in ("university", "bank"):
        return "org", 0.75
    if last in _PLACE_SUFFIX or first in _PLACE_PREFIX:
        return "place", 0.75
    if last in _EVENT_SUFFIX:
        return "event", 0.7
    if prev in _PROJECT_CUE or (prev in ("called", "named") and prev2 in _NAMED_PROJECT_CUE):
        return "project", 0.6
    if first in _FIRST_NAMES and len(words) <= 3:
        return "person", 0.7
    if prev in _PLACE_CUE or (prev == "to" and prev2 in _MOTION):
        return "place", 0.6
    if prev == "the" and prev2 in _PLACE_AFTER_THE:
        return "place", 0.6
    if prev == "at":
        return "org", 0.5
    return "other", 0.5


_LITERALS = frozenset("true false none null nil undefined nan inf yes no n/a na".split())
# Tool echoes and status words: what a tool or an assistant prints, not a thing in the user's world.
_STATUS = re.compile(
    r"(?:ok(?:ay)?|done|success(?:ful)?|succeeded|error|failed|failure|pending|saved|updated|added|removed"
    r"|deleted|replaced|stored|noted|acknowledged|got it|understood|n/?a|plain answer"
    r"|(?:entry|entries|item|memory|fact|note|record|file|changes?)\s+(?:added|removed|updated|replaced|saved"
    r"|deleted|stored|created|written|not found))[.!]?",
    re.IGNORECASE,
)
# Words that make a name a clause ("The user is allergic to peanuts", "User prefers dark mode").
_CLAUSE_VERBS = frozenset(
    """is are was were am be been being has have had do does did will would shall should can could may might
    must isn't aren't wasn't weren't doesn't don't didn't won't can't prefers likes loves hates wants needs
    lives works uses owns knows thinks says said told asked moved went got made""".split()
)
MAX_NAME_WORDS = 5


def thing_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a thing (a sentence, a literal, a tool echo, a status), or None if it can."""
    text = " ".join(name.split())
    words = text.split()
    if not words:
        return "is empty"
    if len(words) > MAX_NAME_WORDS:
        return f"has {len(words)} words (a name has at most {MAX_NAME_WORDS}); store a sentence as a fact"
    low = text.lower()
    if low in _LITERALS:
        return "is a literal value, not a name"
    if not any(c.isalpha() for c in text):
        return "has no letters (numbers and symbols only)"
    if any(c in text for c in "=(){}[]<>|\\`"):
        return "contains code or markup characters"
    if _STATUS.fullmatch(low):
        return "is a status message, not a name"
    if len(words) >= 3 and any(w.islower() and w.strip(",.;:!?") in _CLAUSE_VERBS for w in words[1:]):
        return "reads as a sentence; store it as a fact"
    return None


#: Every relation a relational mention ("my sister", "my dog") can imply.
KIN_PREDICATES: frozenset[str] = frozenset(_KIN.values())


def kin_predicate(role: str) -> str | None:
    """The relation a relational mention implies (owner -> mention): "sister" -> sibling_of."""
    return _KIN.get(role.split()[-1]) if role else None


__all__ = [
    "KIN_PREDICATES",
    "MAX_NAME_WORDS",
    "EntityContext",
    "Mention",
    "find_entities",
    "kin_predicate",
    "thing_name_problem",
]
