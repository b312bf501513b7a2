"""`protolab play`: a person plays a game in the browser against a player of the lab, and the
game is a run folder like any other (docs/playtesting.md, docs/play-api.md)."""
