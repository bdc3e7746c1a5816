"""The league server's endpoints, by who may use them.

* ``public``: what anyone sees, logged in or not: the ladder, the final, the match pages,
  replays and logs (as a published report shows them), and the pages' assets.
* ``author``: logging in and out, and the pages of a logged-in author: the bots' pages,
  the match list, their own versions' logs, and the submission form.
* ``author_actions``: an author retiring a bot, deleting a failed version and asking for a
  challenge match, as forms and as the API alike.
* ``organiser``: the organiser's pages, behind the organiser's token: the league's state
  and the command line's actions as forms.
* ``api``: the JSON API; the standings and the final for anyone, the rest for authors
  (``Authorization: Bearer TOKEN``).
* ``common``: what they share: the state every endpoint reads from ``request.app.state``,
  authentication, page rendering, the error pages, and the limits on what a request may ask.
* ``submissions``: receiving and accepting a bot's archive, for the form and the API alike.
"""
