# ruff: noqa: E501  (a data table: one task template per line reads best)
"""Websites and what people ask of them: the vocabulary of coherent tasks.

A task id names its site (`Adidas--1a2b3c4d` is adidas.com, `alltrails_find_23` is
alltrails.com); the site's topic decides what the instruction asks for, which detail the
answer must report, and what the result pages list. So a drill-down never shows a recipe
search on GitHub.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    """What tasks on sites of one kind ask for.

    `things`: what is searched for; `templates`: instructions with `{thing}`, `{site}`,
    `{date}`, `{n}`, `{price}`, each paired with the detail the answer must report
    (a key of `DETAILS`); `constraint`: the condition a careless run skips.
    """

    things: tuple[str, ...]
    templates: tuple[tuple[str, str], ...]
    constraint: str


TOPICS: dict[str, Topic] = {
    "apparel": Topic(
        ("trail running shoes", "rain jacket", "hoodie", "training shorts", "sneakers"),
        (
            (
                "Find the cheapest {thing} on {site} in size M rated 4 stars or more; give its price.",
                "price",
            ),
            ("On {site}, find {thing} under ${price} and report the color options.", "options"),
        ),
        "the size and rating filters",
    ),
    "electronics": Topic(
        ("wireless earbuds", "4K monitor", "laptop stand", "mechanical keyboard", "USB-C hub"),
        (
            (
                "Find the best-rated {thing} on {site} under ${price} and tell me its price.",
                "price",
            ),
            ("On {site}, add a {thing} with at least 4.5 stars to the cart.", "cart"),
        ),
        "the price limit",
    ),
    "home": Topic(
        ("desk lamp", "bookshelf", "air fryer", "office chair", "coffee maker"),
        (
            ("Find a {thing} on {site} under ${price} and report its rating.", "rating"),
            ("On {site}, add the cheapest {thing} with free delivery to the cart.", "cart"),
        ),
        "the free-delivery filter",
    ),
    "outdoor": Topic(
        ("hiking backpack", "two-person tent", "sleeping bag", "trekking poles"),
        (
            (
                "Find a {thing} on {site} under ${price} rated 4.5 or higher; give its price.",
                "price",
            ),
        ),
        "the rating filter",
    ),
    "cars": Topic(
        ("used Honda Civic", "used Toyota RAV4", "used Tesla Model 3", "used Ford F-150"),
        (
            (
                "On {site}, find a {thing} under ${price}00 with under 40,000 miles; give its price.",
                "price",
            ),
        ),
        "the mileage limit",
    ),
    "flights": Topic(
        ("flight from Boston to Chicago", "flight from Seattle to Denver", "flight to Austin"),
        (
            ("Search {site} for a nonstop {thing} on {date} and report the lowest fare.", "price"),
            ("On {site}, find the earliest {thing} on {date} for {n} adults.", "time"),
        ),
        "the nonstop filter",
    ),
    "hotels": Topic(
        ("hotel in Lisbon", "hotel near Times Square", "apartment in Barcelona", "hotel in Kyoto"),
        (
            (
                "On {site}, find a {thing} for {n} adults on {date} with free cancellation; give the nightly price.",
                "price",
            ),
            ("Find a {thing} on {site} rated 9+ for {date} and report its address.", "address"),
        ),
        "the free-cancellation filter",
    ),
    "trains": Topic(
        ("train from New York to Washington", "train from Boston to New York"),
        (
            (
                "On {site}, find the earliest {thing} on {date} and report its departure time.",
                "time",
            ),
        ),
        "the travel date",
    ),
    "rental": Topic(
        ("car rental in Denver", "10-foot truck in Austin", "SUV rental at LAX"),
        (("Find a {thing} on {site} for {date} and report the total price.", "price"),),
        "the pick-up date",
    ),
    "recipes": Topic(
        ("vegetarian lasagna recipe", "gluten-free banana bread recipe", "chicken curry recipe"),
        (
            (
                "On {site}, find a {thing} with at least 500 reviews and tell me its rating.",
                "rating",
            ),
        ),
        "the review-count requirement",
    ),
    "courses": Topic(
        ("intro to Python course", "machine learning course", "data visualization course"),
        (("On {site}, find a beginner {thing} and report its rating.", "rating"),),
        "the beginner level filter",
    ),
    "music": Topic(
        ("vinyl pressing of Kind of Blue", "first pressing of Rumours", "Blue Train LP"),
        (("Find the cheapest {thing} on {site} in VG+ condition and give its price.", "price"),),
        "the condition filter",
    ),
    "sports": Topic(
        ("latest Lakers score", "Celtics schedule", "Yankees standings", "Chiefs last game"),
        (("Use {site} to find the {thing} and report it.", "score"),),
        "the correct team",
    ),
    "code": Topic(
        ("most starred Rust web framework", "most starred Python web scraper"),
        (("On {site}, find the {thing} and report its star count.", "count"),),
        "sorting by stars",
    ),
    "health": Topic(
        ("symptoms of iron deficiency", "side effects of ibuprofen", "benefits of magnesium"),
        (("Use {site} to look up the {thing} and list the first three.", "list"),),
        "the article's own list",
    ),
    "movies": Topic(
        ("top-rated sci-fi movie of 2023", "best animated movie of 2022", "Oppenheimer showtimes"),
        (("On {site}, look up the {thing} and tell me its rating.", "rating"),),
        "the release year",
    ),
    "parks": Topic(
        ("campground in Yosemite", "permit for Half Dome", "ranger-led hike in Zion"),
        (("On {site}, find a {thing} available on {date} and report the price.", "price"),),
        "the date availability",
    ),
    "weather": Topic(
        ("weekend forecast for Seattle", "10-day forecast for Denver"),
        (("Use {site} to find the {thing} and report Saturday's high.", "temperature"),),
        "the requested day",
    ),
    "events": Topic(
        ("jazz concert in New Orleans", "comedy show in Chicago", "Taylor Swift tickets"),
        (
            (
                "Find a {thing} on {site} on {date} for {n} people and report the cheapest ticket.",
                "price",
            ),
        ),
        "the event date",
    ),
    "restaurants": Topic(
        ("Thai restaurant in Chicago", "sushi place in Seattle", "brunch spot in Austin"),
        (
            (
                "Find a {thing} on {site} rated 4.5 or higher that is open on {date}; give its address.",
                "address",
            ),
            ("Use {site} to book a table at a {thing} for {n} people on {date}.", "time"),
        ),
        "the 4.5-star minimum",
    ),
    "parking": Topic(
        ("parking near Fenway Park", "garage near Union Station"),
        (("Find {thing} on {site} for {date} and report the price.", "price"),),
        "the date and time",
    ),
    "services": Topic(
        ("plumber in Seattle", "house cleaner in Austin", "electrician in Denver"),
        (
            (
                "Use {site} to find a {thing} rated 4.8 or higher and report the starting price.",
                "price",
            ),
        ),
        "the rating minimum",
    ),
    "housing": Topic(
        ("2-bedroom apartment in Boston", "studio in Brooklyn", "house with a yard in Portland"),
        (
            (
                "Find a {thing} on {site} listed for less than ${price}0 a month and report its address.",
                "address",
            ),
            ("On {site}, find the newest listing for a {thing} and give its price.", "price"),
        ),
        "the price limit",
    ),
    "jobs": Topic(
        ("data analyst job in Denver", "remote UX designer job", "nurse job in Boston"),
        (("Find a {thing} on {site} posted in the last week and report the company.", "company"),),
        "the posted-date filter",
    ),
    "shipping": Topic(
        (
            "shipping rate for a 5 lb box from Boston to Miami",
            "nearest drop-off location in Denver",
        ),
        (("Use {site} to find the {thing} and report it.", "price"),),
        "the package weight",
    ),
    "groceries": Topic(
        ("organic oat milk", "gluten-free pasta", "fresh salmon fillet"),
        (("On {site}, add the cheapest {thing} to the cart.", "cart"),),
        "sorting by price",
    ),
    "trails": Topic(
        (
            "beginner hiking trail near Denver",
            "dog-friendly trail near Seattle",
            "waterfall hike near Portland",
        ),
        (
            (
                "Use {site} to find a {thing} under 5 miles and report its length and rating.",
                "rating",
            ),
        ),
        "the length limit",
    ),
    "reference": Topic(
        ("population of Lisbon", "height of Mount Rainier", "year the Golden Gate Bridge opened"),
        (("Use {site} to find the {thing}.", "fact"),),
        "the right article",
    ),
}

OM2W_SITES: tuple[tuple[str, str, str], ...] = (
    ("Adidas", "www.adidas.com", "apparel"),
    ("Nike", "www.nike.com", "apparel"),
    ("Uniqlo", "www.uniqlo.com", "apparel"),
    ("Macys", "www.macys.com", "apparel"),
    ("Amazon", "www.amazon.com", "electronics"),
    ("Apple", "www.apple.com", "electronics"),
    ("Bestbuy", "www.bestbuy.com", "electronics"),
    ("Newegg", "www.newegg.com", "electronics"),
    ("Ebay", "www.ebay.com", "electronics"),
    ("Ikea", "www.ikea.com", "home"),
    ("Target", "www.target.com", "home"),
    ("Costco", "www.costco.com", "home"),
    ("Homedepot", "www.homedepot.com", "home"),
    ("Wayfair", "www.wayfair.com", "home"),
    ("Rei", "www.rei.com", "outdoor"),
    ("Carmax", "www.carmax.com", "cars"),
    ("Cars", "www.cars.com", "cars"),
    ("Kbb", "www.kbb.com", "cars"),
    ("Delta", "www.delta.com", "flights"),
    ("United", "www.united.com", "flights"),
    ("Kayak", "www.kayak.com", "flights"),
    ("Expedia", "www.expedia.com", "flights"),
    ("Jetblue", "www.jetblue.com", "flights"),
    ("Booking", "www.booking.com", "hotels"),
    ("Marriott", "www.marriott.com", "hotels"),
    ("Airbnb", "www.airbnb.com", "hotels"),
    ("Hilton", "www.hilton.com", "hotels"),
    ("Amtrak", "www.amtrak.com", "trains"),
    ("Budget", "www.budget.com", "rental"),
    ("Uhaul", "www.uhaul.com", "rental"),
    ("Enterprise", "www.enterprise.com", "rental"),
    ("Allrecipes", "www.allrecipes.com", "recipes"),
    ("Foodnetwork", "www.foodnetwork.com", "recipes"),
    ("Coursera", "www.coursera.org", "courses"),
    ("Udemy", "www.udemy.com", "courses"),
    ("Edx", "www.edx.org", "courses"),
    ("Discogs", "www.discogs.com", "music"),
    ("Espn", "www.espn.com", "sports"),
    ("Nba", "www.nba.com", "sports"),
    ("Mlb", "www.mlb.com", "sports"),
    ("Github", "github.com", "code"),
    ("Healthline", "www.healthline.com", "health"),
    ("Webmd", "www.webmd.com", "health"),
    ("Imdb", "www.imdb.com", "movies"),
    ("Rottentomatoes", "www.rottentomatoes.com", "movies"),
    ("Fandango", "www.fandango.com", "movies"),
    ("Nps", "www.nps.gov", "parks"),
    ("Recreation", "www.recreation.gov", "parks"),
    ("Weather", "weather.com", "weather"),
    ("Eventbrite", "www.eventbrite.com", "events"),
    ("Ticketmaster", "www.ticketmaster.com", "events"),
    ("Seatgeek", "seatgeek.com", "events"),
    ("Opentable", "www.opentable.com", "restaurants"),
    ("Yelp", "www.yelp.com", "restaurants"),
    ("Tripadvisor", "www.tripadvisor.com", "restaurants"),
    ("Spothero", "spothero.com", "parking"),
    ("Thumbtack", "www.thumbtack.com", "services"),
    ("Angi", "www.angi.com", "services"),
    ("Apartments", "www.apartments.com", "housing"),
    ("Redfin", "www.redfin.com", "housing"),
    ("Zillow", "www.zillow.com", "housing"),
    ("Indeed", "www.indeed.com", "jobs"),
    ("Ups", "www.ups.com", "shipping"),
)
"""(Name as in the task id, domain, topic): 63 websites, as in the real om2w split."""

INTERNAL_SITES: tuple[tuple[str, str, str, str], ...] = (
    ("alltrails", "AllTrails", "www.alltrails.com", "trails"),
    ("amazon", "Amazon", "www.amazon.com", "electronics"),
    ("booking", "Booking.com", "www.booking.com", "hotels"),
    ("coursera", "Coursera", "www.coursera.org", "courses"),
    ("espn", "ESPN", "www.espn.com", "sports"),
    ("github", "GitHub", "github.com", "code"),
    ("googleflights", "Google Flights", "www.google.com", "flights"),
    ("imdb", "IMDb", "www.imdb.com", "movies"),
    ("instacart", "Instacart", "www.instacart.com", "groceries"),
    ("kayak", "Kayak", "www.kayak.com", "flights"),
    ("linkedin", "LinkedIn", "www.linkedin.com", "jobs"),
    ("nytcooking", "NYT Cooking", "cooking.nytimes.com", "recipes"),
    ("opentable", "OpenTable", "www.opentable.com", "restaurants"),
    ("redfin", "Redfin", "www.redfin.com", "housing"),
    ("target", "Target", "www.target.com", "home"),
    ("ticketmaster", "Ticketmaster", "www.ticketmaster.com", "events"),
    ("tripadvisor", "Tripadvisor", "www.tripadvisor.com", "restaurants"),
    ("weather", "Weather", "weather.com", "weather"),
    ("wikipedia", "Wikipedia", "en.wikipedia.org", "reference"),
    ("yelp", "Yelp", "www.yelp.com", "restaurants"),
    ("zillow", "Zillow", "www.zillow.com", "housing"),
    ("walmart", "Walmart", "www.walmart.com", "home"),
    ("bestbuy", "Best Buy", "www.bestbuy.com", "electronics"),
    ("airbnb", "Airbnb", "www.airbnb.com", "hotels"),
    ("expedia", "Expedia", "www.expedia.com", "flights"),
    ("indeed", "Indeed", "www.indeed.com", "jobs"),
    ("rei", "REI", "www.rei.com", "outdoor"),
    ("allrecipes", "Allrecipes", "www.allrecipes.com", "recipes"),
    ("udemy", "Udemy", "www.udemy.com", "courses"),
    ("discogs", "Discogs", "www.discogs.com", "music"),
    ("webmd", "WebMD", "www.webmd.com", "health"),
    ("nike", "Nike", "www.nike.com", "apparel"),
    ("carmax", "CarMax", "www.carmax.com", "cars"),
    ("spothero", "SpotHero", "spothero.com", "parking"),
    ("thumbtack", "Thumbtack", "www.thumbtack.com", "services"),
)
"""(id prefix, display name, domain, topic): 35 sites x 2 verbs = 70 task families."""
FAMILY_VERBS = ("find", "search", "compare", "lookup", "check", "book", "order", "browse")

DETAILS = {
    "price": "the price",
    "options": "the color options",
    "cart": "the item in the cart",
    "rating": "the rating",
    "time": "the time",
    "address": "the address",
    "score": "the score",
    "count": "the star count",
    "list": "the list",
    "temperature": "the temperature",
    "company": "the company",
    "fact": "the figure",
}
"""Detail kind -> how a reviewer names it ("the answer omits the price")."""
