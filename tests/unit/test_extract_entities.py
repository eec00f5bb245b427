"""Entity mentions: known linking, gazetteers, relatives and pets, pronouns, junk filtering."""

from __future__ import annotations

from hermes_memory.extract.entities import EntityContext, Mention, find_entities
from hermes_memory.extract.types import KnownEntities, KnownEntity

CTX = EntityContext("Caroline", "Melanie", KnownEntities())


def found(text: str, ctx: EntityContext = CTX) -> dict[str, Mention]:
    return {m.name: m for m in find_entities(text, 0, ctx)}


def test_first_person_is_the_speaker_and_second_person_the_addressee() -> None:
    mentions = found("I told you my plan.")
    assert mentions["Caroline"].known and mentions["Caroline"].entity_type == "person"
    assert mentions["Melanie"].known


def test_relatives_become_relational_people_of_the_speaker() -> None:
    sister = found("I visited my older sister.")["Caroline's older sister"]
    assert (sister.entity_type, sister.owner, sister.role, sister.kin_predicate) == (
        "person", "Caroline", "older sister", "sibling_of")
    husband = found("How is your husband?")["Melanie's husband"]
    assert husband.owner == "Melanie" and husband.kin_predicate == "married_to"


def test_named_relatives_and_pets_keep_the_relation_as_alias() -> None:
    anna = found("My sister Anna lives here.")["Anna"]
    assert anna.entity_type == "person" and anna.aliases == ["Caroline's sister"]
    pets = found("My dogs Luna and Oliver are sweet.")
    assert pets["Luna"].entity_type == "pet" and pets["Oliver"].entity_type == "pet"
    assert found("I adopted a puppy named Max.")["Max"].entity_type == "pet"


def test_a_mate_a_flatmate_and_a_housemate_are_people_of_the_speaker() -> None:
    """British words for a friend and for those one lives with name people as "friend" and "roommate" do."""
    said = found("My flatmate Oskar cooks, my best mate Ruairi washes up and our housemate Zofia hoovers.")
    assert said["Oskar"].entity_type == "person" and said["Oskar"].aliases == ["Caroline's flatmate"]
    assert said["Ruairi"].aliases == ["Caroline's best mate"]
    assert said["Zofia"].entity_type == "person"


def test_gazetteer_types() -> None:
    mentions = found("I use Python and Docker at Google, and I moved to New York.")
    assert mentions["Python"].entity_type == "tech"
    assert mentions["Docker"].entity_type == "tool"
    assert mentions["Google"].entity_type == "org"
    assert mentions["New York"].entity_type == "place"


def test_known_entities_link_aliases_to_the_canonical_name() -> None:
    known = KnownEntities([KnownEntity("Melanie", "person", ("Mel",)), KnownEntity("hermes-memory", "project",
                                                                                   ("hermes memory",))])
    ctx = EntityContext("Caroline", None, known)
    mentions = found("Mel and I worked on hermes memory.", ctx)
    assert mentions["Melanie"].known and mentions["Melanie"].aliases == ["Mel"]
    assert mentions["hermes-memory"].entity_type == "project"


def test_a_proper_name_only_links_to_a_capitalised_mention() -> None:
    ctx = EntityContext("Caroline", None, KnownEntities([KnownEntity("Will", "person")]))
    assert "Will" not in found("I will go.", ctx)
    assert "Will" in found("I met Will there.", ctx)


def test_sentence_starters_days_months_and_interjections_are_not_entities() -> None:
    names = set(found("The weather was great. Wow, on Monday in May we rested. Thanks! Painting is fun."))
    assert names <= {"Caroline", "Melanie"}
    # a day said as a habit is a time too
    assert set(found("I teach a spin class on Tuesdays and Fridays.")) <= {"Caroline", "Melanie"}


def test_shouting_is_not_an_acronym_but_acronyms_are_kept() -> None:
    assert "DOING" not in found("JUST DOING IT!")
    assert found("I support the LGBTQ community.")["LGBTQ"].entity_type == "concept"


def test_suffixes_titles_and_cues_type_unknown_names() -> None:
    mentions = found("I met Dr. Smith at St. Mary's Hospital near Whispering Falls, then flew to Zarvania.")
    assert mentions["Dr. Smith"].entity_type == "person"
    assert mentions["St. Mary's Hospital"].entity_type == "org"
    assert mentions["Whispering Falls"].entity_type == "place"
    assert mentions["Zarvania"].entity_type == "place"


def test_names_listed_with_a_person_are_people() -> None:
    """An unknown name listed with a person's name (a comma, "and", "&") is a person too; the speaker's
    "I" after a comma lists no one."""
    twins = found("We have twin girls, Olivia and Nkechi, both in Year 2.")
    assert twins["Nkechi"].entity_type == "person"
    trio = found("I went climbing with Tobias, Oluwaseun & Emma on Sunday.")
    assert trio["Oluwaseun"].entity_type == "person"
    assert found("My favourite show is Severance, I watch it weekly.")["Severance"].entity_type == "other"


def test_an_ampersand_joins_a_firms_name_not_two_peoples() -> None:
    """"Holm & Vester" after "at" is one organisation; names joined by "&" that read as no organisation
    are each their own ("a flat with Ifeoma & Radek", "Oluwaseun & Emma")."""
    firm = found("I'm a trainee at Holm & Vester in Aarhus.")
    assert firm["Holm & Vester"].entity_type == "org" and "Holm" not in firm
    assert found("We buy our flour from Bakewell & Co.")["Bakewell & Co"].entity_type == "org"
    flat = found("I share a flat with Ifeoma & Radek.")
    assert "Ifeoma" in flat and "Radek" in flat and "Ifeoma & Radek" not in flat


def test_quoted_titles_are_one_entity() -> None:
    mentions = found('I loved "Charlotte\'s Web" and "Becoming Nicole" by Amy Ellis Nutt.')
    assert mentions["Charlotte's Web"].entity_type == "other"
    assert "Becoming Nicole" in mentions
    assert mentions["Amy Ellis Nutt"].entity_type == "person"


def test_offsets_are_shifted_to_message_positions() -> None:
    sentence = "I moved to Paris."
    [paris] = [m for m in find_entities(sentence, 50, CTX) if m.name == "Paris"]
    assert (paris.start, paris.end) == (50 + sentence.index("Paris"), 50 + sentence.index("Paris") + 5)


def test_non_latin_and_emoji_text_yield_no_junk() -> None:
    assert set(found("我搬到了北京 🎉🎉")) == set()


def test_nicknames_of_participants_link_to_them() -> None:
    mentions = found("Thanks Mel! Caro says hi.")
    assert mentions["Melanie"].aliases == ["Mel"] and mentions["Melanie"].known
    assert mentions["Caroline"].aliases == ["Caro"]
    assert "Melissa" in found("I met Melissa.")  # not a prefix of a participant's name
