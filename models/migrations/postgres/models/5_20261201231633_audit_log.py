from tortoise import BaseDBAsyncClient

RUN_IN_TRANSACTION = True


async def upgrade(db: BaseDBAsyncClient) -> str:
    return """
        CREATE TABLE IF NOT EXISTS "audit_entry" (
    "id" SERIAL NOT NULL PRIMARY KEY,
    "entry_id" VARCHAR(32) NOT NULL UNIQUE,
    "created_at" BIGINT NOT NULL,
    "actor_id" INT NOT NULL,
    "actor_name" VARCHAR(64) NOT NULL,
    "actor_role" INT NOT NULL,
    "actor_ip" VARCHAR(64) NOT NULL,
    "action" VARCHAR(64) NOT NULL,
    "target_type" VARCHAR(32) NOT NULL,
    "target_id" VARCHAR(128) NOT NULL,
    "target_role" INT,
    "before" TEXT NOT NULL,
    "after" TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS "idx_audit_entry_created_817289" ON "audit_entry" ("created_at");
CREATE INDEX IF NOT EXISTS "idx_audit_entry_actor_i_81d906" ON "audit_entry" ("actor_id", "created_at");
CREATE INDEX IF NOT EXISTS "idx_audit_entry_action_b12f3c" ON "audit_entry" ("action", "created_at");
CREATE INDEX IF NOT EXISTS "idx_audit_entry_target__741395" ON "audit_entry" ("target_type", "target_id", "created_at");"""


async def downgrade(db: BaseDBAsyncClient) -> str:
    return """
        DROP TABLE IF EXISTS "audit_entry";"""


MODELS_STATE = (
    "eJztXW1v2zgS/iuCP3UBb5E4adpdHA5IsuluDmndS9PDAsVCoC3a1kYWtRQVN7fX/36kLF"
    "lvlCyqliyxs8ACjchHkh+OhsPhcObv0ZpY2PFfXs5sx2bPo5+Nv0cuWmP+j3zT2Bghz0sa"
    "xAWGZk7YF6U6zXxG0Zzxywvk+JhfsrA/p7bHbOKKzlMXG5RsDA9T48WSksAbG+E9x8Z8hV"
    "wXOz/8bGxWiBlsxXtiBz0ba/4/78kwb8AUvxRPssicP8p2l4e8aeDafwXYZGSJeUfKb/35"
    "8yi8n2gN7yj+Ed3TtK3RH3/wv23Xwl+wX9Ydu4KpqK/3aC5s7FgZtvmNeFN43WTPXnjt1m"
    "Vvw47ix87MOXGCtZt09p7Ziri73rbLxNUldjFFDIvbMxoI/t3AcaKRiodk+zOTLtv3T2Es"
    "vECBI0ZRoLcvkFwbmeb76YP58ebBNEeFEY4RqfGJLs2JK6SDv6of/vqleIUfJ6fnr8/fnF"
    "2cv+FdwtfcXXn9dfvohJgtMKTn/cPoa9iOGNr2CAcgIXU3EFler1eIyondAXLc8pfOcxsz"
    "WUVufCFhN/kkuqB3jb6YDnaXbMX/vDiv4PI/l/fXv13ev7g4/0E8kPAvePtlv49aJmGToD"
    "unIVTo3QE0pHfy6lUNfnmvUoLDtizDKTVTXztkQfu1RDOqh6cnElpjdVzg9IoQByNXzmsK"
    "lSN1xmFtCXDMcwu0VnB2NZ3ehTOY7//lhBduH3Jy++nd1c39i9NQnHknm2E52R61CY2Mgx"
    "zb9rJUiNOotkS4SPZJuwL802RydvZ6cnJ28ebV+evXr96c7CS52FQl0le3vwqiMwNSZH6D"
    "7eWKKWiOBKAN5d+kM4S1tnhMmRbiwgzNHzeIWmahhUxIWd9i03qyzl9BLlqGLIlf9HWcmO"
    "CBZbMbl1G5gZ60Vtvoop+Jdx332enlTEts5IINPKdYCIqJ2Ii3fR7xJxEaTUmSNvFISQtD"
    "lD9jK4bhbwn/LN4FzOouzepQhqQ2Sbnpl8Ycxvo7LsUZ2+9sUsP0O5uUWn6iKWf4JcKtNG"
    "1mcd1p8dE/FoEbfsZGpJZmyMcvXbL550irOTWtx2qqlTQE5lU5oeFfCuoki+puOTlqTZpb"
    "XqtvCaN8eaMsuTEIZLdEGSi5mNIYkNs6chvZhgoERwgNvUyHJzhnYtdlOQfTTpIPb9JlFi"
    "+KNB/Sbu4RyaeTNzVY5r1KaQ7bpDwrTnU5VKO5LlqA9EZzHHi2m+EFoRJOH/CXElIThAai"
    "W8HVw83vDxlvaSygL95d/h7K7vo5armbvv817p4S6Ou76VV+5lswTFXY3gGA7Fpk98S7d7"
    "3drhlJXHtx07jKrzdPdWrTpwc+ti59bHJ7rHz6ktthLa7RTntNbELkI5bsPJUr0ai7FkuH"
    "rmcs4mEX2SahS+Ta/0WqC7cSuAazWRdWL/aZqRyQkUUB03WY9hliga+gmxNAZ7EYQ1HOqm"
    "7fth2+BSKHLKiw/X9ASY031pgtk9g6W3IxEjblDr4pF05j6iOTgWkj8h1zT7Hv8ffAJfyX"
    "kl/AaTMAh3O48a/VDKiSRZfGaGfPvTqt45XnvUqnybAtt2oJ/R0FisuXiDuABvx2vUScIQ"
    "e5c4meeOsQVOZFTjA5xhcCNDQtUUH5L9NPV3c3xof7m+vbj7fT9xmSt43iUhJte39zeSdn"
    "2Aw8q6HBUnYHbRR0xzNk4rOtq2ESBKgYZRUzhEM/u392Mm22cjQl8Llq+CsgDKlplywOdM"
    "o36BRzjTxPvJuqakkDQcMoa5itQ4+TauEmQ1ACh4FQHgg4WnS0MOiAEXOGJPs75cGkKQhs"
    "U+YJDReVpu0uiPJSdIcCDaKsQYSdZLtewExGHrGrsq0jg2qjTg7nN48PIytKdh4Hsq0s2w"
    "xJzJKqUNNWzZBjba0dPmJ6juYrbHpc8UpjS8o3gvI4mAULy5pQpy4cxY3LPAzUcI9OL18H"
    "PiPr6WXAVh8oebKtMLqwGOso6TaujHsMASbhduXK9CJI2AXCILUJg+xbgEi3AfwtT2S+Ey"
    "hZCHF/7c5vH55ae64W+xj318DM7SCy6ZH/MBV24/4dsrudloSPrxueD39ebUhJknZXBpsl"
    "ae7Y2FU9HZgBaac6Jq8uam1bXVRsW10UFm9bynw8p1iyxNjLdQLUju9WomuEGiQ0Cuc3sW"
    "t5JDJz6xJffgcYgTojEHonGzFfRALjdRgP/Mgp34h1ORqYr8O8PyfiLiprmh2iS+PQw65t"
    "GR4lC9vBBl4j2xnwnGr7fiALoaxY7uwQINf1ZlGLWx+yuMmqeTPBaMdyK3L85+bRV423Tm"
    "O0Y7kVWd5gxzEfXbJRcpBkUcB0fTvEinzVyiZICtgh334wG7BnSjAn/t2M8yyyQ9I9iheY"
    "UmyZ8WsMeAws2/cc9Gw2Gwc5usOxGDj7oTGrTnsO1iHfHVrfrRAeOpp99qyW2TEDgv3ysu"
    "O+kH93H+UdB57Gh5JUByaLg4E5yMD0JMLkjixHkogScXlcFUHiRB26zYQfGdfiyYV098/b"
    "LE6F66EjNjYM8q3bIx1lrdlqMJA0/1iRLKlhr8lsCtGdvuo9wzBH93IqyOw4Pfc8d92QhJ"
    "y4DMs2kCpC5xOIBn6yrqPm0w4QVd9Nm5TrEz+ftWbUNqOh4oMizUoWRxoCPgH5mWtVuc2i"
    "tJPbVnILNEgrABkFvtFo8yhZew2OQRZw2gzAAW24tefgMHxNmV4pFiguuAXVE9AFkHuugl"
    "DbN/ntMVpL1HBV/HcGBxHgKhHg/a31PFwxHkQyqKGuMCBzYod+CYr5j/ZVT4hkUY1oz1c1"
    "0u7cXk92sd7Z1p8koC6WVnlOtY6r9rTW2X5wErozyWx5/yg+Slh73WCBZVu2VOjfRtzwJB"
    "UcjW2WlR1AzdOOzNbzkxpz/PlJ6RwvmnJ+3D8VjagdQLe9ndOfTuvEI/50Wh6PKNpkjkSV"
    "ZUGC0EB6u14XRP5XLNEX+xiPQEC6Munp11SgPQcD4hul3lUqQbsDANnKZPc7wKo4aX4v8V"
    "V+MFvbTQoe5YDaWN5d888QbUR/BgfsN2N/Ybu2v2pAfw4I/Dfj316jZUlZqvJpOAOCqbhh"
    "yQGVRWtp1dHBr1ondTwCk3KPwKTgEeDLoSXFvhK/aYxuDJ/VYfisnOGzAsMLcbqTm4W+2o"
    "IpBwPFoW7DQ1TB4R20EJ/YvdkxCxgjstC5cu2RgoDmaOJY9DBltiyfVqVnMYUC2pVpd3BY"
    "wdVltsTArtIwOSDomWZ6Zksj2bhqGc1yMA0Ev+1tuJntOIqV01IQDQjuQrP0JLZpGpNTiG"
    "ua7nZDymOaSNLnKPFM0jIvFdnGpdVdGkpoj6LtDpi9pjzM6Qk5gdIGzw4AGmFIGuED8n3+"
    "oVxTbGFusiBHphyKnSr1hLftbs53/aEczBBDywaWRGN4BA+pvs5gT0ckWki1qkMeqJ0l0U"
    "q2Uy+YOfZcXpOvwl+RQWlRNqprjwViDIvdJjtmTkHWZdguc20St6Ncm62ck0doGajplgQB"
    "GnyvBvftpcu5C2TpdyrjPDI4cMQ1c8TNHf5xmnyl4Uq9RJWnkAtYOImscBI5tJmfMLX5c1"
    "TrfxWwwLwC82JtHXgmduylLYhQ416CBvbV2S+JMa5DfVm0MfBexTt/oOt7hDKlncYsSgNz"
    "5ljh3eqRlHkk5NA8/DYk8pkoxtBkeIpYsEEHl9T63yJg6BfE0EjiGE8ax1UO8TDoyLTifv"
    "v84KPfSECdZ8NC/mpG+C8w0HJJ8ZKLiEEWxgth2423393YWPG+P7wc5Qav4S0kfvZMouzy"
    "FNfgjgd3/BF9bW0kJ4Dss206dSCLZ1feyYEdH2xfS3Sdhj1MsiHsQDX+szgwHRu6L+V+44"
    "qEPbr5iyHcfsDiuycdcBX3+mYE7lqFoPkKNxqCPBJGoOFJb/TEDZEG+icHBP4H53+5xxZe"
    "l4Ytp1rHVR4Ymu0HkYgdm9zfu+tjKCYehNhvD17XiYs7Kw+LOytExZUlDqhKUiLPG9CilJ"
    "4OREr7Fi2rj1duGEu80xPx3+AtLNgEHsjgCOsRrxuNTgGqjc3RdcFpsY/eyNrLwLSh/5sm"
    "056s7T5ixhz+dbhsJFnbpVrHVWs7P9tv7+76rVgKEobd+bNB8ZxQ62eDuNigZGN4mPJrDn"
    "rGlhHVbDA2K+JjIzrzzK8Kn45l8NWfIVYlocorbL+39AxYffZr9Xm0YiA9o7llq3Qgi/ze"
    "CzLUCoC9MY1MwoEFNmi9XOqJRfmA/EeZLRler7QiWdwD9gaGNalVlGoC/dAb/ZAx5zyr0b"
    "hkceDnOnykGteBimuZFEQ373o7VXkcxBaESsr5VqQ4TmF0I/nwKY57uVgc3rQKa8X26tBD"
    "LmhYgOtgL0CBxFYzs0KxiTaLTUAphGPVUIGyWVA267tlH8pmHf1ADdQYaruKExSsOEItXC"
    "Rb/1QUwUXSxQ9QvZ9qqA1y5KQ8UBsEaoNoqVks7OAmW2NZHOiV4QUuCI/5SBa5EDaMK0MX"
    "dl0gdiEjnb3fZBnYucbhEQwnG/M2Qp3aQeflpYPO38DJRjjZOMAYcjhg1zPDK7uROMd+sy"
    "SrBSgMz8GHB3/xbNpodPLI7gbnx5ZVfudHUNf8DZqkwMkjYXHYMGrVdey1zSryEFXWYyii"
    "ITe9Wi2MRgmgsjiQ/Wayv027Gkqwb2JXEKNakKTsFvAVKHwFaRJVnLJ5HHhm1aurOQ7ZmL"
    "anxHsGBKQrk76kJPBU1sM7gAZkt7Ei7o232/vkjaTebtEwrvZ2e+Z2jPenerh0DcINLxcb"
    "HnoWGSIMQi1Mi/kaqjqCaxxc41q7xtFavbZiggGbuqlN7cq2JN46BJVaca50V2IhIEMjvY"
    "K/X6afru5ujA/3N9e3H2+n7zPGw7Yxayjf31zewXGQo0v0PKBUZDxSMdjSmA5ttsCPX6Vl"
    "s63Odlv5blths40/x8KmS1QoTmO0289sodow9n1RBlvtHHQWpdt2XCt1aSJL21xzs5ookV"
    "1Edqg6BHFeR9XKD5+HeLuZ2XgXFHbZ2qxUs/ZEFF+TwclDwYRpfDZqAEcuPexaUYxt+zro"
    "9KJOFoyL8iQYF31yPG3IWzRnhI5kzqdd47jSAbXhL4D8Wh4oCLjsl9Oj114lDfhNm9HcYp"
    "A4lapM6BjRnTXX2TqlFQvabroZa3ezBVuQ3+HvwIY1vX2GJbtSe0uBxzAwzr4t3yeEcPZw"
    "cCJ90iRGMIeEz2N4p5diy/mK3y7wrvnVUZWBnepWw9Q2Z2F3LjIWbsHszlS4F88wV8hfQU"
    "n7790c12uTNxFsBZM8A9LQKm+lVEGTOTD45hMMkWz2hmewEMFC7I198snHUo9feL3SAgni"
    "HuDpG9bMV21aqJ6zTGNgD33vLOgh398Qqripm2C0i95txf1n2b7noGdTVZjzOO3YPrxAU+"
    "JIKC4/cxd1hwPudTdYj5gtoKB4h8KlONgpSUBW/uHvALrFJ51O6sTZ8V7lu9STQqzd0mar"
    "YKYYB5YB6Ubz4fWqY7vBF4sokpxFAct1WXbwE5YojPJdqzxOG9f8wXTwBs9XSLUAaAYE4r"
    "tPfBl28JKitWppoiwMeN7H8zaVirlLJ1eX6DyuEdN5/6XW62M4nXKkAvKQQeJo+Wu2Na/n"
    "8qOGFdlrcjhtBuBgJkj/DskXp8T4nwPV12ixCKMPlGbFFEa3GfHw51K2bKnphgwG9ELhWD"
    "enp8F8l4Fpw2rXCQ05iSvbZ4Q+Nx2DAhzGotlY2O6TzVSjibKgzlzPQ9EtEGjRY4E/YhGB"
    "/VFIR4gk+L7iXKaXAVtd2dsTgiUxL5k+433xLyZBvLs52/ZvOwLXo+TJtrZ/8h/7OXMh3R"
    "5jIFD32NE0vQvUPUao48Hm1py812Q1/5VACHQ5saUyW1kCsIDVMCB68qrOaW/eqyJO6aIs"
    "9b6qPZLFgaGok6Vyiak9X8nsk6il0ipBSR+Iyx2WOi63JJ4w9RXLyacgWirjFoJGxUelwH"
    "DUXUN2T0/qlEvkvcpjxk4KBRP5ExmWObH/9XH6vuyM1Q6SY9my58z4n+HY/hDN4gpyBRni"
    "zuW5ovNpoQU5xGeiCnN8g6tjT2Zf/w9nOc+s"
)
