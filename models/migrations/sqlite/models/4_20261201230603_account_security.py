from tortoise import BaseDBAsyncClient

RUN_IN_TRANSACTION = True


async def upgrade(db: BaseDBAsyncClient) -> str:
    return """
        CREATE TABLE IF NOT EXISTS "custom_oauth_providers" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "slug" VARCHAR(64) NOT NULL UNIQUE,
    "icon" VARCHAR(128) NOT NULL,
    "kind" VARCHAR(32) NOT NULL,
    "enabled" INT NOT NULL,
    "client_id" VARCHAR(256) NOT NULL,
    "client_secret" VARCHAR(512) NOT NULL,
    "authorization_endpoint" VARCHAR(512) NOT NULL,
    "token_endpoint" VARCHAR(512) NOT NULL,
    "user_info_endpoint" VARCHAR(512) NOT NULL,
    "scopes" VARCHAR(256) NOT NULL,
    "issuer" VARCHAR(512) NOT NULL,
    "audience" VARCHAR(256) NOT NULL,
    "jwks_url" VARCHAR(512) NOT NULL,
    "well_known" VARCHAR(512) NOT NULL,
    "user_id_field" VARCHAR(128) NOT NULL,
    "username_field" VARCHAR(128) NOT NULL,
    "display_name_field" VARCHAR(128) NOT NULL,
    "email_field" VARCHAR(128) NOT NULL,
    "auth_style" INT NOT NULL,
    "created_at" BIGINT NOT NULL,
    "updated_at" BIGINT NOT NULL
);
        CREATE TABLE IF NOT EXISTS "passkey_credentials" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    "user_id" INT NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "credential_id" VARCHAR(512) NOT NULL UNIQUE,
    "public_key" TEXT NOT NULL,
    "attestation_type" VARCHAR(255) NOT NULL,
    "aaguid" VARCHAR(64) NOT NULL,
    "sign_count" BIGINT NOT NULL,
    "clone_warning" INT NOT NULL,
    "user_verified" INT NOT NULL,
    "backup_eligible" INT NOT NULL,
    "backup_state" INT NOT NULL,
    "transports" TEXT NOT NULL,
    "created_time" BIGINT NOT NULL,
    "last_used_time" BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS "idx_passkey_cre_user_id_ecfbbf" ON "passkey_credentials" ("user_id");
        CREATE TABLE IF NOT EXISTS "two_fas" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    "user_id" INT NOT NULL UNIQUE,
    "secret" VARCHAR(255) NOT NULL,
    "is_enabled" INT NOT NULL,
    "last_step" BIGINT NOT NULL,
    "created_time" BIGINT NOT NULL,
    "enabled_time" BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS "idx_two_fas_is_enab_a074b2" ON "two_fas" ("is_enabled");
        CREATE TABLE IF NOT EXISTS "two_fa_backup_codes" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    "user_id" INT NOT NULL,
    "code_hash" VARCHAR(64) NOT NULL,
    "used_time" BIGINT,
    "created_time" BIGINT NOT NULL,
    CONSTRAINT "uid_two_fa_back_user_id_fbf264" UNIQUE ("user_id", "code_hash")
);
CREATE INDEX IF NOT EXISTS "idx_two_fa_back_user_id_9d6632" ON "two_fa_backup_codes" ("user_id");
        CREATE TABLE IF NOT EXISTS "user_oauth_bindings" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    "user_id" INT NOT NULL,
    "provider_id" INT NOT NULL,
    "provider_user_id" VARCHAR(256) NOT NULL,
    "created_at" BIGINT NOT NULL,
    CONSTRAINT "uid_user_oauth__user_id_97d8d5" UNIQUE ("user_id", "provider_id"),
    CONSTRAINT "uid_user_oauth__provide_62e393" UNIQUE ("provider_id", "provider_user_id")
);
CREATE INDEX IF NOT EXISTS "idx_user_oauth__provide_fd3ddc" ON "user_oauth_bindings" ("provider_id");"""


async def downgrade(db: BaseDBAsyncClient) -> str:
    return """
        DROP TABLE IF EXISTS "passkey_credentials";
        DROP TABLE IF EXISTS "custom_oauth_providers";
        DROP TABLE IF EXISTS "two_fas";
        DROP TABLE IF EXISTS "user_oauth_bindings";
        DROP TABLE IF EXISTS "two_fa_backup_codes";"""


MODELS_STATE = (
    "eJztXW1v2zgS/iuCP3UBb5E4L+0uDgck2XQ3hzTupelhgWIh0BJtcyOLWomK69vrfz9Stm"
    "y9ULKoWrLEzgGLS0U+fnk4Hg5nhjN/DxbUxk7w+mpCHMJWg5+NvwcuWmD+R3ZoaAyQ5+0G"
    "xAOGJk40FyUmTQLmI4vxx1PkBJg/snFg+cRjhLpi8tjFhk+Xhod949XMp6E3NKLXHBrWHL"
    "kudn742VjOETPYnM/EDloZC/4fn8kwH8A+fi3eyaYWfyvizg75oqFL/gqxyegM84k+f+nP"
    "nwfR64nR6BXFH5vXNIk9+OMP/m/i2vgLDoqmY1cwtZnrPZtTgh07xTZ/IT4UPTfZyoue3b"
    "nsXTRRfNmJaVEnXLi7yd6Kzam7nU1cJp7OsIt9xLB4eeaHgn83dJzNSsVLsv6auynrz5/A"
    "2HiKQkesokCvP8Du2cA0H8ZP5sfbJ9Mc5FY4RiTWZ/PIoq6QDv5Rg+jbz8RH+HF0ev7m/O"
    "3Z5flbPiX6mNsnb76u33pHzBoY0fPwNPgajSOG1jOiBdiRul2INK83c+TLid0CMtzyD53l"
    "NmayjNz4wY7d3U+iDXoX6IvpYHfG5vyfl+clXP7n6vHmt6vHV5fnP4g3pPwXvP5lP2xGRt"
    "GQoDujIVTo3QI0pHd0cVGBXz6rkOBoLM1wQs1U1w5p0H4tUY/q/umJHa2xOs5xek2pg5Er"
    "5zWBypA64bCmBDjmuQFaSzi7Ho/vox0sCP5yogd3Txm5/fT++vbx1WkkznwSYVhOtucT6m"
    "+MgwzbZFYoxElUUyKcJ/ukWQH+aTQ6O3szOjm7fHtx/ubNxduTrSTnh8pE+vruV0F0akHy"
    "zC8xmc2ZgubYAbSh/Jt0hrDWps8J00I8mCDreYl828yN0BEtmpsfWowW2SfIRbOIJfGNvg"
    "63JvjNWqEPJNZ5PFRqnVuJSfus82J+JZZxxvIF47ZN4zaipjqt8fT2ftmnnSZ2R+QzluxN"
    "T/hLAZGb6VqYsCU8Pd3+/pSyAGJD9dX7q9+jTX+x2ozcjx9+jacnDISb+/F1hmrqcSOKmN"
    "SfIZf8F0UfN0d98fmhAN7eUgwGTcl06ixxOnpb4SzBZxWeJaKxNPcMB8xUPrKlUcB0FaYD"
    "hlgYKOjmHaC101pflHP0/wryGs9vSlJzRPZZUOGAcEBJtXwsvrnJiExiy866WWR73A7+MQ"
    "1dSzBnbA4UExTg1y5d/rMxsT7KUTjaxtRXJgXTRuRb5t7Hgcc/By7gv5D8HE6bBTiYzhG/"
    "VjP0lSy6JEY7e+7idFRhm+SzCrfJaCxzaon8HTmKi4+IW4AG/LZ9RJwgB7mWRE+8cygq4D"
    "uByTA+FaC+aYkSyn8Zf7q+vzU+PN7e3H28Gz+kSF4Ppv3xj7dX93KGzdCzaxosRa+gjYJu"
    "eYfc+WyrapgdAlSMsorpQ1rA9s9Wts1GgtdhwFXDXyFlSE27pHGgU75Bp5gL5Hnis6mqli"
    "QQNIyyhlk79DipNq6zBAVwWAjlhYDkg2PpHxQyak6QJL5TSHsSAmHKLKHRodIk7pQqH0W3"
    "KNAgyhpE2EnE9UJmMvqMXZWwjgyqjTo5nN88TldUlOwsDmRbWbYZkpglJbFg1KgZcqzQ2u"
    "EToy1kzbHpccUrzS0pDgRlcbAL5o41kU6dOoqByywM1HCX8hvDgNHF+Cpk8w8+fSF2lF2Y"
    "z3WUTBuW5j1GAJNyu3JuehtINAXSILVJg+xagsgRr6AcfiMLnFDJQojnH4bc48ptw9QSSy"
    "33MZ6vgZnbQmbTM/9iKuzG81tkd70tCR9fOzyfVYmMnxUHxs9ycfE+XaPaPuntPSrLIdhl"
    "0quAxXKdAmmnOkYXl5XCVpclYavL3OFtTVmALR9Ljhh7ud4BteO7kewaoQapv0nnN7Fre3"
    "Rj5lYlvvgVYAWqrEDknazFfB4JjFdhPAw2TvlarMvRwHwV5gOLildROdNsEW0ahx52iW14"
    "Pp0SBxt4gYjT4z2VBEEoS6EsOe5sESDX1XZRm1sfsrzJsn1zh9GO5Ubk+M/lc6Cab53EaM"
    "dyI7K8xI5jPrt0qeQgSaOA6ep2iL3xVSubIAlgi3wH4aTHninBnPi7HudpZIukez6eYt/H"
    "thl/jB6vgU0Cz0Ers946yNEtrkXP2Y+MWXXaM7AW+W7R+m6E8MjRHLCVo3L7Lg2CeHnRdV"
    "8kObpXueyLWs5D+G6u+saXklQXJo2DhTnIwnQkw+SezgaSjBLxeFiWQeJsJjSZLvI5qRL4"
    "2OfYuBbvnB2K5FH2PHLExoZBdnR9paNoNF0vMjkKmSxtZrIklr0iswlEe/qq8wzDHt3JrS"
    "AVcVp1vHZdn4ScugzLAkglqfM7iAZ+sraz5pMOEFXfTZOU65M/n7Zm1ILR7ed39pxmJYsj"
    "CQGfgPzOtarcplHayW0jtQVqlBWAigLfaLR5Pl14Na5B5nDaLMABbbiF5+AofU2ZXikWKM"
    "65BdUL0IVQe66EUBKY/OUxWkjUcFn+dwoHGeAqGeDd7QbTXzHuRTGovp4woHJii34JH/Mv"
    "HajeEEmjatG+cTx0xEvfgEh3JIr1nth/0tB3sbRRY2J0WBbTWqTnwU3o1iSz4fhRfJWw8r"
    "nBBsu26KjQvUBc/yQVHI2NEYos1dY5O4QGllV6jz8/qbDHn58U7vFiKOPH/VPRiNoCdIvt"
    "nP50WiUf8afT4nxEMSZzJKocC3YIDaS37XPBxv+KJfpiH+MbEJCuTHryYyrQnoEB8bVK70"
    "rM4PJiu7pE3tomu9sJVvlN83vJrwrCyYLUaXiUAWpjebfNP0N+LfpTOGC/HvtT4pJgXoP+"
    "DBD4r8c/WaBZQVuq4m04BYKtuGbLAZVDa2HX0d6fWkdVPAKjYo/AKOcR4MehmY8DJX6TGN"
    "0YPqvC8Fkxw2c5hqfidic3CwO1A1MGBopD3YaHrILDO2ghP7F9s2MSMkZlqXPF2iMBAc1R"
    "x7HoYZ8RWT2tUs9iAgW0K9Pu4KiDq8uIxMAu0zAZIOiZenpmTSNdumoVzTIwDQS/6TDchD"
    "iOYue0BEQDgtvQLB3JbRrH5OTymsbbaEhxThPdzTlKPpO0zUtJtXFpd5eaEtqhbLsDVq8p"
    "TnN6QU6oFODZAkAj9EkjfEBBwH8oNz62MTdZkCNTDvlJpXrCW083re18aAfTx9SynhXR6B"
    "/Bfeqv09vbETstpNrVIQvUzpJopNqpF04cYsl78pX4K1IoLdpGte2xQIxhEW0iMXMKsi7D"
    "tllrk7ot1dps5J48QrNQTbfsEKDB92rwgMxczl0oK79TmueRwoEjrp4jznL4j9PkJw1X6i"
    "UqvYWcw8JNZIWbyJHN/IJ9wt9Htf9XDgvMKzAvztahZ2KHzIggQo17CRrYV2e/IMe4CvVF"
    "2cbAexnv/A3dwKM+U4o0plEamDPHSu9Wz6TMIqGG5uHDkChgohlDneXJY8EG7V1R63+LhK"
    "FfEEMDiWN8Nzgsc4hHSUemHc/b5wcf/EZD31kZNgrmE8q/gYFmMx/PuIgYdGq8ErbdcP27"
    "GxpzPveH14PM4tV8CYmfPVUou7jENbjjwR1/RF9bE8UJoPpsk04dqOLZlneyZ9cHm9cSbZ"
    "dhj4psCDtQjf80DkzHmu5Lud+4pGCPbv5iSLfvsfjuKQdcxr2+FYHbViHImuNaS5BFwgrU"
    "vOmNXrghUkP/ZIDAf+/8L4/YxovCtOXE6LDMA+On50EmYssm9/fu+uiLiQcp9uuL11Xy4s"
    "6K0+LOcllxRYUDyoqUyOsGNCilpz2R0q5ly+rjlevHEe/0RPyv9xYWBIF7sjjCesSLWquT"
    "g2pjc7TdcFrE0WtZeymYNvR/02bakbPdR8yYw38dLhtIznaJ0WHZ2S5Iz9sbXb8TR0HKsG"
    "utDB9b1Ld/NqiLDZ8uDQ/7/JmDVtg2Nj0bjOWcBtjY3HnmT4VPxzb46c8Qp5JI5eXC7w29"
    "B5w+u3X6PFozkI7R3LBV2pNDfucFGXoFQGxMI5OwZ4kNWh+XOmJRPqHgWWZLRs9LrUgWz4"
    "DYQL82tZJWTaAfOqMfUuacZ9dalzQO/FyHz1TjOlDxLJOA6OZdb6Yrj4PYlPqSdr4lJY4T"
    "GN1IPnyJ404eFvu3rcJZsbk+9FALGg7gOtgL0CCx0cqs0GyiyWYT0ArhWD1UoG0WtM36bt"
    "mHtllHv1ADPYaa7uIEDSuO0AsXyc4/JU1wkfTwA1Tvpxp6gxy5KA/0BoHeIFpqFhs7uE5o"
    "LI0DvdK/xAXhMR/IMheigWFp6sJ2CuQupKSz80GWnt1r7B/BcLMxayNU6R10Xtw66Pwt3G"
    "yEm409zCGHC3YdM7zSgUQLB/WKrOagsDwHXx78xSN+rdXJIttbnB8bVvmtX0Fd8E9QpwRO"
    "FgmHw5pZq65DFoSV1CEq7ceQR0NterVeGLUKQKVxIPv1ZH9ddjWS4MDEriBGtSFJ0UvAr0"
    "DhV5AkUcUpm8WBZ1a9u5rj0KVJPCXeUyAgXZn0mU9DT+U8vAVoQHYTJ+LOeLu9T95A6u0W"
    "A8Nyb7dnrtd4f6mHK9eg3PByseGhlagQYVDfxn6+XkPZRHCNg2tca9c4Wqj3VtxhwKaua1"
    "O7spDEO4eiQivOlUYlpgLSN9JL+Ptl/On6/tb48Hh7c/fxbvyQMh7Wg2lD+fH26h6ugxxd"
    "oq3Q90XFIxWDLYlp0WYLg/ijNGy2VQm3FUfbcsE2/j42Nl2qQnESo108s4FuwzgIRBtstX"
    "vQaZRu4bhG+tJsLG1zwc1qqkR2Htmi6hDEeS11Kz98HeJ1MLN2FBSibE12qll4IouvzuJk"
    "oWDC1L4b1YMrlx527U2ObfM66PSyShWMy+IiGJddcjwt6TtkMeoPZM6n7eCw1AG15B8ABZ"
    "U8UJBw2S2nR6e9ShrwmzSjucUgcSqVmdAxoj1rrrVzSiMWNKkbjCXthGBz8tv/CGzU0ztg"
    "WBKV2tsKPIaBcfZt9T4hhbODi7PRJ3VyBDNI+Hn07/ZSbDlf85cLvRv+dFBmYCemVTC1zU"
    "k0nYuMjRswu1Md7sV7mHMUzKGl/fdujusV5N0JtoJJngJpaJU30qqgzh4YfvMNho1sdoZn"
    "sBDBQuyMffIpwFKPX/S81AIJ4xng6evXzlduWqjes0xiIIa+dxf0UBAsqa8Y1N1htMvebc"
    "T9Z5PAc9DKVBXmLE47tg8v0D51JBQX37nbTIcL7lUDrEesFpBTvH3hUlzslBQgK/7hbwG6"
    "5Sedjqrk2fFZxVHqUS7XbkbYPJwo5oGlQLrRfHi96hA3/GJTRZLTKGC5KssOfsEShVEctc"
    "ritHHNH0wHL7E1R6oNQFMgEN994suwg2c+Wqi2JkrDgOd9PK9LqZjbcnJVic7iajGd9V9q"
    "fT6G2ylHaiAPFSSOVr9m3fPakl81LKlek8FpswAHM0G6d0k+vyXGf/ZUX6PpNMo+UNoVEx"
    "jddsTD30tZs6WmG1IY0Au5a92cnhr7XQqmDattFzTkJM5JwKi/qrsGOTisRb21IO4LYarZ"
    "RGlQa67nvugWSLTosMAfsYnA/iykI2QSfF95LuOrkM2vyfqGYEHOS2rOcF/+i0kRn25O1v"
    "ObzsD1fPpC7PU/+Zf9nHqQHI8xkKh77GyaziXqHiPV8WB7a0beK7Ka/ZVACnQxsYUyW9oC"
    "MIfVMCF6dFHltjefVZKndFlUel/VHknjwFDUyVK5wj6x5jL7ZDNSapWg3RzIy+2XOi62JF"
    "6wHyi2k09AtFTGDSSNih+VAsOb6Rqye3pSpV0in1WcM3aSa5jI35FhmRP7Xx/HD0V3rLaQ"
    "DMs2sZjxP8MhQR/N4hJyBRnilYtrRWfLQgtyaMBEF+b4Ba6PvZl9/T8DUocq"
)
