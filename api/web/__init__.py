"""HTTP-bound helpers of the web application: client addresses, sessions, OAuth, Turnstile."""
