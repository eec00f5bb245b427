"""The entity lexicon: gazetteers, first names, words that are never names, suffixes and cue words, and how
they type a capitalised name."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

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
CAP_STOP = frozenset(
    """
    i i'm i've i'd i'll im ive the a an this that these those my your our his her their its it it's we you
    he she they me us them there here what where who why how which when whatever hey hi hello thanks thank
    wow oh yeah yes no ok okay lol haha omg btw tbh imo imho idk fyi asap aww awww ah hmm um well so and but
    or if sure great good nice cool awesome congrats congratulations bye sorry please yep yup nope totally
    definitely absolutely also just really actually anyway anyways besides plus then now today tomorrow
    yesterday tonight monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
    thursdays fridays saturdays sundays january february march april
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
TITLES = frozenset("mr mrs ms dr prof professor aunt uncle grandma grandpa coach officer sir madam".split())
DOT_PREFIX = TITLES | {"st", "mt", "ft"}
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


@functools.cache
def gazetteer() -> dict[str, tuple[str, str]]:
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


@functools.cache
def gazetteer_first_words() -> dict[str, int]:
    firsts: dict[str, int] = {}
    for key in gazetteer():
        first = key.split(" ", 1)[0]
        firsts[first] = max(firsts.get(first, 0), key.count(" ") + 1)
    return firsts


def is_name_word(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in CAP_STOP and not word.isdigit()


def is_first_name(word: str) -> bool:
    """Whether a word is a first name the lexicon knows ("Anna", "Brian")."""
    return word.lower() in _FIRST_NAMES


def continues_name(tokens: list[tuple[str, int, int]], j: int) -> bool:
    """Whether token j ends a longer name the gazetteer word starts: "Boston Marathon", "Oxford Street"."""
    if j >= len(tokens) or not is_name_word(tokens[j][0]) or tokens[j][1] - tokens[j - 1][2] != 1:
        return False
    last = tokens[j][0].lower()
    return last in _EVENT_SUFFIX or last in _ORG_SUFFIX or last in _PLACE_SUFFIX


def gazetteer_case_ok(surface: str, canonical: str, entity_type: str) -> bool:
    """ "US"/"WHO" only in capitals; most names capitalised; a few tech names also in lower case."""
    if canonical.isupper() and len(canonical) <= 4:
        return surface == canonical
    if surface[:1].isupper():
        return True
    return entity_type in ("tech", "tool") and surface.casefold() in _LOWER_OK


def shouted(neighbours: Sequence[str]) -> bool:
    """Whether a word in capitals is set among words in capitals ("JUST DOING IT", "TELL US MORE"):
    emphasis, not an acronym or a country."""
    return any(len(w) > 1 and w.isupper() for w in neighbours)


_WORD = re.compile(r"[\w'’]+")


def the_country(m: re.Match[str]) -> bool:
    """Whether a pronoun matched without regard to case is "US" in capitals, not among words in capitals
    (``shouted``): the country ("Ana lives in the US now"), not "us"."""
    if m.group(0) != "US":
        return False
    before = _WORD.findall(m.string, 0, m.start())[-1:]
    after = _WORD.findall(m.string, m.end())[:1]
    return not shouted(before + after)


# Gazetteer names that are unambiguous in lower case ("python" is rarely the snake in chat about code).
_LOWER_OK = frozenset(
    "python javascript typescript docker kubernetes github gitlab postgres postgresql mysql sqlite redis "
    "numpy pytorch tensorflow django fastapi vscode linux ubuntu jupyter graphql mongodb".split()
)


_PLACE_PREFIX = frozenset("lake mount mt fort port san santa saint camino".split())
# "on the Spree", "along the Danube": a name after "the" and a preposition of place.
_PLACE_AFTER_THE = frozenset("on along across around near beside over".split())


def type_of_name(words: list[str], prev: str, prev2: str) -> tuple[str, float]:
    """Entity type of an unknown capitalised name from its words and the two words before it."""
    first, last = words[0].lower().rstrip("."), words[-1].lower().rstrip(".")
    if first in TITLES and len(words) > 1:
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


__all__ = [
    "CAP_STOP",
    "DOT_PREFIX",
    "TITLES",
    "continues_name",
    "gazetteer",
    "gazetteer_case_ok",
    "gazetteer_first_words",
    "is_first_name",
    "is_name_word",
    "shouted",
    "the_country",
    "type_of_name",
]
