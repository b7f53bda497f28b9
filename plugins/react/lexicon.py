"""A small built-in word-to-concept table for tool retrieval without an embedding model
(docs/retrieval.md#tool-retrieval-by-meaning).

``concepts(word)`` gives the concepts a stemmed word points at ("rain", "umbrella", "forecast": *weather*); a
tool's own ``metadata["synonyms"]`` adds words for that tool only.
"""

from __future__ import annotations

from functools import lru_cache

TABLE = """
weather: weather forecast rain rainy raining snow snowy snowing sunny sunshine umbrella temperature cold hot warm
 chilly freezing wind windy storm stormy cloud cloudy humid humidity climate degree celsius fahrenheit hail fog
 thunder drizzle heatwave frost outside weekend
finance: stock share market ticker nasdaq dow equity invest investor investment portfolio dividend trading trade
 broker bull bear earnings ipo
money: money price cost pay payment paid dollar euro pound yen cash fund funds budget expense spend spent afford
 cheap expensive bill invoice charge refund salary wage
currency: currency exchange rate forex dollar euro yen pound rupee yuan franc convert conversion
crypto: crypto cryptocurrency bitcoin btc ethereum eth coin token blockchain wallet
bank: bank account balance transfer deposit withdraw loan mortgage credit debit iban saving savings checking owe overdraft
tax: tax taxes vat income deduction irs return
email: email mail inbox gmail outlook message send reply forward recipient newsletter spam attachment inbox unread answered
chat: chat slack teams discord channel post message dm notify notification ping announce announcement team ops
sms: sms text texting phone mobile whatsapp
call: call phone dial ring voicemail
contact: contact contacts person people address book phone number colleague friend lives live reach
calendar: calendar event meeting appointment schedule agenda invite booking busy free slot availability week
 month tomorrow today upcoming entry entries
time: time clock hour minute timezone zone date day now current local
reminder: reminder remind alarm alert notify notification later todo task deadline forget remember
todo: todo task list checklist chore errand done complete list chores
note: note notes memo jot write down notebook idea ideas
file: file files folder directory disk path document save open read write delete remove rename copy move
 storage drive contents txt md yaml json log zip backup erase downloads desktop documents
search: search find look lookup query google bing browse web internet online page site tips info information research
web: web url link website site page http https browser download fetch online internet domain html grab
map: map maps location place where address street coordinate latitude longitude gps near nearby geocode landmark tower
direction: direction directions route navigate navigation drive driving walk walking way path commute trip
 distance how far travel
travel: travel trip flight fly plane airline airport ticket boarding vacation holiday journey abroad seat
hotel: hotel room stay lodging accommodation night motel hostel airbnb reservation check-in sleep bed
restaurant: restaurant eat dinner lunch breakfast food cuisine dine dining table reservation cafe bar pizza
 sushi hungry italian mexican thai indian chinese takeaway
recipe: recipe cook cooking bake baking ingredient ingredients dish meal kitchen food make
translate: translate translation language spanish french german chinese english japanese italian say
dictionary: dictionary define definition meaning mean word synonym spell spelling vocabulary
encyclopedia: wikipedia encyclopedia article fact facts history who what biography about life
math: math calculate calculator compute arithmetic sum add plus minus multiply divide times equation formula
 percent square root number
unit: unit units convert conversion mile kilometre kilometer km meter metre inch foot feet pound kilogram kg
 gram ounce litre liter gallon celsius fahrenheit
random: random pick choose dice roll coin flip chance lottery
news: news headline headlines article breaking report journalist press happening current world events election politics
music: music song songs play playlist album artist band spotify listen tune audio jazz rock pop classical hiphop radio
video: video movie film watch youtube stream clip trailer
cinema: cinema movie film showtime showtimes theater theatre ticket screening tonight showing playing
image: image images picture photo photos pic jpg png resize crop thumbnail pixel smaller bigger shrink scale jpeg
ocr: ocr scan scanned text extract read picture photo receipt words screenshot sign
speech: speech speak voice aloud audio say read tts pronounce loud robot
transcribe: transcribe transcription transcript audio recording record dictation speech caption subtitle memo mp3 wav podcast voice
summary: summary summarize summarise shorten condense brief tldr gist overview digest bullet points condense key
sentiment: sentiment positive negative opinion review feeling mood tone happy angry
pdf: pdf document page pages report paper contract
sheet: spreadsheet excel csv sheet table row column cell
database: database sql query table row select record db postgres mysql sqlite rows
code: code program script run execute python function compile debug bug output snippet
test: test tests testing pytest unit check suite failing pass passes passing failing failure
git: git commit diff branch merge repository repo push pull change changes version repo
ticket: ticket issue bug support helpdesk jira report problem complaint incident broken
container: docker container containers image kubernetes kubectl pod pods cluster deploy deployment
server: server website site up down status uptime ping health online outage http outage
security: password secret credential login key secure strong generate passphrase passphrase
qr: qr code barcode scan link
shorten: shorten short link url tiny bitly
shop: shop shopping buy purchase order cart store product item sell price deal discount amazon cart checkout charger headphones batteries
delivery: delivery deliver package parcel shipping ship track tracking courier arrive shipment order amazon dhl ups fedex
ride: taxi cab uber lyft ride car driver pickup lift cab
health: health doctor medicine medical symptom sick ill pain fever hospital clinic appointment prescription
fitness: fitness workout exercise run running steps calories gym weight train training jog ran 5k minutes
sport: sport sports score scores game match team league football soccer basketball baseball tennis result win won lose lost
job: job jobs career hire hiring resume cv interview salary employer vacancy position vacancies work nurse developer engineer
book: book books novel author read reading library isbn
social: twitter tweet instagram facebook social post share follower like linkedin
weather_alert: alert warning storm hurricane flood earthquake emergency
home: light lights lamp thermostat heating heat home house door lock smart turn switch bedroom kitchen living brighter dim
translate_doc: document text language
age: age old birthday born year
"""


def _load() -> dict[str, tuple[str, ...]]:
    from .retrieval import tokenize  # the same word folding as the tool texts

    table: dict[str, list[str]] = {}
    concept = ""
    for line in TABLE.strip().splitlines():
        if ":" in line and not line.startswith(" "):
            concept, _, words = line.partition(":")
        else:
            words = line
        for word in words.split():
            for form in {word, *tokenize(word)}:
                table.setdefault(form, []).append(concept.strip())
    return {w: tuple(dict.fromkeys(c)) for w, c in table.items()}


_TABLE: dict[str, tuple[str, ...]] = {}
_SUFFIXES = ("ing", "ed", "er", "ly")
#: the longest word looked up: the table's are under 20 letters; a longer one (a task's or an MCP tool's 1 MB
#: "word") has no concept and is never kept by the process-wide cache
MAX_WORD = 40


def concepts(word: str) -> tuple[str, ...]:
    """The concepts ``word`` (a token of ``retrieval.tokenize``) points at; () for a word the table lacks.
    A word not in the table is tried without an -ing, -ed, -er or -ly ending ("booking" -> "book")."""
    return () if len(word) > MAX_WORD else _concepts(word)


@lru_cache(maxsize=16384)
def _concepts(word: str) -> tuple[str, ...]:
    if not _TABLE:
        _TABLE.update(_load())
    found = _TABLE.get(word)
    if found is None:
        for suffix in _SUFFIXES:
            if len(word) > len(suffix) + 2 and word.endswith(suffix):
                root = word[:-len(suffix)]
                found = _TABLE.get(root) or _TABLE.get(root + "e") or (
                    _TABLE.get(root[:-1]) if len(root) > 3 and root[-1] == root[-2] else None)
                if found:
                    break
    return found or ()
