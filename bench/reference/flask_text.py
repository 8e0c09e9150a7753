"""A Flask stand-in for the original auxiliary service's text endpoint, for `npm run bench` only.

The original Python service is not in this repository; this is what its spec describes, written the
way such a service usually is: `POST /process/text` with JSON `{text}` answers the word count
(`str.split()`) and the character count (`len()`), served by Flask's own threaded server (Werkzeug),
as `flask run` serves it. It counts less than ours does (no graphemes, sentences, paragraphs or top
words), so the comparison favours it. Listens on 127.0.0.1:$PORT.
"""
import logging
import os

from flask import Flask, jsonify, request
from werkzeug.serving import WSGIRequestHandler

app = Flask(__name__)
# The bench's services run at LOG_LEVEL=warn; Werkzeug's line per request would cost this one alone.
logging.getLogger("werkzeug").setLevel(logging.WARNING)


@app.get("/")
def welcome():
    return jsonify(service="flask stand-in", endpoints=["POST /process/text"])


@app.post("/process/text")
def process_text():
    body = request.get_json(silent=True)
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str):
        return jsonify(error="text must be a string"), 422
    return jsonify(word_count=len(text.split()), character_count=len(text))


if __name__ == "__main__":
    # Werkzeug closes the connection after each answer unless told to speak HTTP/1.1; the load client
    # then spends its time reconnecting (25 answers/s). Keep-alive, as a production server would.
    WSGIRequestHandler.protocol_version = "HTTP/1.1"
    app.run(host="127.0.0.1", port=int(os.environ["PORT"]), threaded=True)
