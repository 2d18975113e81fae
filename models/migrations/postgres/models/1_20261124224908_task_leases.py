from tortoise import BaseDBAsyncClient

RUN_IN_TRANSACTION = True


async def upgrade(db: BaseDBAsyncClient) -> str:
    return """
        ALTER TABLE "midjourney" ADD "billing" TEXT NOT NULL DEFAULT '';
        ALTER TABLE "midjourney" ADD "lease_owner" VARCHAR(40) NOT NULL DEFAULT '';
        ALTER TABLE "task" ADD "billing" TEXT NOT NULL DEFAULT '';
        ALTER TABLE "task" ADD "lease_owner" VARCHAR(40) NOT NULL DEFAULT '';"""


async def downgrade(db: BaseDBAsyncClient) -> str:
    return """
        ALTER TABLE "task" DROP COLUMN "billing";
        ALTER TABLE "task" DROP COLUMN "lease_owner";
        ALTER TABLE "midjourney" DROP COLUMN "billing";
        ALTER TABLE "midjourney" DROP COLUMN "lease_owner";"""


MODELS_STATE = (
    "eJztXWtv2zgW/SuCP7WAp0icNE2LxQJJms5kkcazabIYoBgItEXbmkikKlFNs7P970vKLz"
    "1IRVQtWWLvAIPJiDyyfHh9dV+8/HvgUwd70auzieu57Gnwzvp7QJCP+R/5oaE1QEGwHRAX"
    "GJp4yVyUmjSJWIimjF+eIS/C/JKDo2noBsylREweE2yF9NEKcGi9mIc0DoZWcs+hNV0gQr"
    "D38p31uEDMYgs+E3voyfL5v3wmw3wAh/iV+CSHTvlHuWS+y5vGxP0SY5vROeYTQ37rz58H"
    "yf3EaHJH8cfqnrbrDP78k/+/Sxz8DUeq6ZgIplZzgwd75mLPybDNb8SHkus2ewqSa1eEfU"
    "gmii87safUi32ynRw8sQUlm9kuYeLqHBMcIobF7VkYC/5J7HmrlVovyfJrbqcsnz+FcfAM"
    "xZ5YRYFePsD22sC2b8Z39qfLO9seFFZ4jUitz+rSlBIhHfxRo+Tbz8Uj/DI6PH5zfHp0cn"
    "zKpySPubny5vvyo7fELIEJPTd3g+/JOGJoOSNZgC2pm4XI8nqxQKGc2A0gxy1/6Dy3aybL"
    "yF1f2LK7/Um0Qa+PvtkeJnO24P97clzC5X/Obi9+O7t9cXL8Unwg5b/g5S/7ZjUySoYE3T"
    "kNoUPvBmAgvaPXryvwy2cpCU7Gsgyn1Ex17ZAFPa8l6lHdPz2xpXWtjgucnlPqYUTkvKZQ"
    "OVInHNaUAK95boDWEs7Ox+Pr5A0WRV+85MLVXU5u7z+eX96+OEzEmU9yGZaTHYQuDVfGQY"
    "5td64U4jSqKREukn3QrAC/HY2Ojt6MDo5OTl8fv3nz+vRgI8nFoTKRPr/6VRCdWZAi84/Y"
    "nS+YhubYAoyh/Id0hrDWZg8p00JcmKDpwyMKHbswQkdUNbc45I/8/BVE0DxhSXyj78ONCX"
    "6xVOgDiXW+Hiq1zqepSc9Z52p+JZZxzvIF47ZN4zahpjqt6+nt/bIPO03slsgHLHk33eFv"
    "CiJX040wYUt4urv84y5jAawN1Rcfz/5IXvr+02rkenzz63p6ykC4uB6f56imATeiXJuGc0"
    "Tc/6LkcQvUq/0HBby9pRgMmpLpjC9xODqt4EvwWUpfIhnLcs9wxGxtly2LAqarMB0xxOJI"
    "QzdvAa15a31Rzsl/NeR1Pb8pSS0Q2WdBBQdhh5I6DbH45jZzZRJb5uvmke1xO/jHLCZTwZ"
    "y1cigmKMKvCH38Z2NivRdXOHmN6a9MBmaMyLfMfYijgD8HVvCvJL+AM2YBdqZzxK/VjkMt"
    "iy6NMc6ee304qvCa5LOUr8lkLOe1JPGOAsVqF3EDMIDftl3ECfIQmUr0xAePIgXfKUyO8Z"
    "kA9U1LlFD+fnx/fn1p/X57eXH16Wp8kyF5OZiNx99enl3LGbbjwKlpsKjuYIyCbvkNuY3Z"
    "VtUwWwSoGG0V04eygM2frbw2G0lexxFXDV9iypCedsniQKf8gE6xfRQE4tl0VUsaCBpGW8"
    "MsA3qcVAfXWQIFHBZCeyGg+GBf+gfFjNoTJMnvKGlPQyBNmSc0cSptl8yotiu6QYEG0dYg"
    "wk5ySRAzm9EHTHTSOjKoMerEhMKaazofSIpqxOVhWUGNt5rQZDHN501aALEBH/ss7OJwVd"
    "SZH1oXdxSuC7mz1zmx/OjS0lONZstI06NQ59NmnU9q2Ssym0K0p246z3AxU4ckqc8qeTrU"
    "cgb058nSdb2krU9CTgnDRCLhalsxBQFDUdtQFFpXt1oljTGtYmX3+42y1kzlCrYMygDBbo"
    "dmLYsjDQEPRx6K1ZXbLMo4uW0k5VAj2wCJhh802oKQ+kGN6EgBZ8wC7NCG8wMPi6fQp1eK"
    "BYrzFMf6dWkxlKSVEOpGNr89Rr5EDZftrs3gWtxfu7nS2w22Hd4k3l8x7kWNSF89DCiobD"
    "EuEWL+pSMmVQ9qcc6iatG+Cjx0JErfgEh3JIv10XX+onFIsLR/U2p0WJbT8rPzYJ94a5LZ"
    "cP5IVBFp+Q0OWLYqV6F7ibj+SSoEGhsjFE11d9RvEQZYVtl3/PFBhXf88YHyHS+GcnHcvz"
    "SNqA3AtNzO4dvDKruR3x6qdyOLMVkgUcct2CIMkN72S2OT+CuW6IvnGF+BgHRt0tOPqUF7"
    "DgbE16rIl5jB5TX4pmTe2ia72wVWxZfmz1JfFcUT363TByEHNMbybpt/hsJa9GdwwH499m"
    "cucaNFDfpzQOC/Hv+uj+aKbhXq13AGBK/imjsRdZxWZTOy3nutoyoRgZE6IjAqRAS4OzQP"
    "caTFbxpjGsNHVRg+UjN8VGB4hlzP5mZhpOcw5WCgOPRteKgq2H2AFuoT2zc7JjFjVFY6p9"
    "YeKQhojjqBxQCHzMVanGdRQLs27R5OGrsR5koM7DINkwOCnqmnZ5Y00kciK21Sm4M5mAGC"
    "33QabuJ6nmZDlRTEAILb0CwdqW0ar8kp1DWNN9kQdU0T3c7ZSz2T9GQBtSrY6ckCHaq222"
    "HvanWZ01fkxVoJng0ANEKfNMK/hT/0nkuBTClsB0v1QuJT2c563rMnVv5G49B7shwULSaU"
    "fwMLzechnnPpsOjMeiHKvDanTS743JfF8ynr3UJ6GmWqqkzdwQNKLqFlx3PqqPMMw+b6lg"
    "/zhE3KbRzq2a/qiOa1RNtdZpIaYtFlVo//LA7CJPXYn9JY1pWmZD9CLG1J01/CIZvQM/Ht"
    "iOdzix3sK+MhqdFhme8TZufBPq9+mcS9dzr6olwhdres6Khyns6R+jido8JpOh08HbEopX"
    "1pCg3HIzblD/fDuDo8EP/03sKCcxR7sjjCesR+rdUpQI2xOVpeg+R8nFrWXgZmDP0mdKL/"
    "hBnz+K+DsIHEt0uNDst8uyg779m81pVwBSnDZPpkhXhKQ+edRQm2QvpoBTjk1zz0hB1r1Q"
    "zGelzQCFurYgp+FU0XfJR7f5bwShKVV0h8NfQZ4H12y/vcW5ehjtHcsFXaEye/84IMTUgg"
    "Km2QSdizlKLR7lJHLMo7FD3IbMnkeqkVydYzIDfQr5daSQ840A+d0Q8Zc251gLbuumRxEO"
    "fafY0I14GavkwKYlp0vZl2Xx5iMxpK+oSX7J1OYUwjefd7pzvpLPbvtQq+YnMHXMAmc3DA"
    "TbAXoPNqo1s+oYtNk11soMfKvpozQT8+6Mf307IP/fj2yz80L2uhPRx0wtlDk20k839Kum"
    "sjqfMDVD9PNTQdgqZDnRB8aDpkgGbpSupcxGwHstx5MjAsTZ5vpkD2PCOYnQ/z92xnXf8I"
    "hr11+bdUlbZYx+quWMensLcO9tb1sIoZtnjpCHTrqawpjqJaq1OAwvLsfHnwt8ANa61OHt"
    "ne4vzSsMpvfROkz5/ArpFnzyMh7FGzbpJ4ru+KF4FqESj1MCIK67yIzi3EhMObWonNlXad"
    "9PPx+DrjpJ9f5b3w+4/nl7cvlkV8fBJnSMF+VEJ8WdVqVEI5yH5F2V+23EskOLIxEcTIGp"
    "mV/QBUt4BfgcavIE2iTlgwj4PYoHbWAXkefbTdQIv3DAhI1yZ9HtI40PGHNwADyG7CI+5M"
    "tDu4DwbSaLcYGJZHuwN7ucbPNxs4IxblhhfBVoCeRI8Ci4YODosdA8omQmgcQuNGh8aRL+"
    "+PWhp28Y3rkdq6TU1kKYkPHkVKK45IsxIzAekb6SX8vR/fn19fWr/fXl5cfboa32SMh+Vg"
    "1lC+vTy7hg0Je5foaRyGoueOjsGWxrRos8XR+lEaNtuqpNvU2bZCso1/joNtQnUoTmOMy2"
    "fuPlEU4Sjij6S5EzeLMi0d18iZBCtL2/a5WU21yC4iW1QdgrgAt8P77jvhLpOZtbOgkGVr"
    "8pQCP/BwvcXJQ8GEqb07pweb/gJMnFWVZ/M66PCkSh+GE3UbhpMOBZ7uoySAU4g7JdeHZW"
    "GneD0Daixbs/RaCCTt/4Avo43pAEXRIw01rbstxrgwfiOWtONGgYeetE9Sy+OMY3v3Ah1S"
    "T0KxuvhmNR0qXataWnssGy4o3r5wKSq8JHvh1D/8DcC0QMUOj31OZaFdtognmgGhDMg0mn"
    "evVz2XxN8cqklyFgUsV2XZw1+xRGGod87mccbEF3amgx/xdIF0e9FnQCC+z4kvwx6eh8jX"
    "7ZKZhQHPz/G83FNhb/aVViU6j6vF9IrGn8M/hjT1ns4yglLyvW1kWR6/onsmcwFnzALszA"
    "TpXrVs8ZW4/rOn+hrNZpw/RyvKlsaY9kbcfYJ6yZaebshgQC8U6js5PTXedxmYMay2vbOZ"
    "k7hwI0bDp7prUIDDWtRbC5d8dZlu7XgW1FrouS+6BdoqdFjg+XfDdY56yeJqLUzeZunEjo"
    "mf5ySuMxy608VAUumyGhmW1bqg7RyodmlZRhurdvmKw0jzvIAUpL3SgNZ8l0ZKMcSPSoPh"
    "1XQD2T08qNIPk89SZ2IPCh0x+ScyLHMN//VpfKMqjd1Aciw77pRZ/7M8bl73kO0ScgUZ4s"
    "7qrdj5XdeCHBox0WZ7fYO998b8/n9LdqXU"
)
