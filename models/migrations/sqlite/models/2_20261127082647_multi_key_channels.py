from tortoise import BaseDBAsyncClient

RUN_IN_TRANSACTION = True


async def upgrade(db: BaseDBAsyncClient) -> str:
    return """
        ALTER TABLE "channel" ADD "cache_per_key" INT NOT NULL DEFAULT 1;
        ALTER TABLE "channel" ADD "max_inflight" INT NOT NULL DEFAULT 0;
        ALTER TABLE "channel" ADD "tag" VARCHAR(64) NOT NULL DEFAULT '';
        ALTER TABLE "channel" ADD "channel_info" TEXT NOT NULL DEFAULT '';
        ALTER TABLE "quota_data" ADD "cache_tokens" BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE "quota_data" ADD "saved_quota" BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE "quota_data" ADD "prompt_tokens" BIGINT NOT NULL DEFAULT 0;
        CREATE INDEX "idx_channel_tag_49d6b4" ON "channel" ("tag");"""


async def downgrade(db: BaseDBAsyncClient) -> str:
    return """
        DROP INDEX IF EXISTS "idx_channel_tag_49d6b4";
        ALTER TABLE "channel" DROP COLUMN "cache_per_key";
        ALTER TABLE "channel" DROP COLUMN "max_inflight";
        ALTER TABLE "channel" DROP COLUMN "tag";
        ALTER TABLE "channel" DROP COLUMN "channel_info";
        ALTER TABLE "quota_data" DROP COLUMN "cache_tokens";
        ALTER TABLE "quota_data" DROP COLUMN "saved_quota";
        ALTER TABLE "quota_data" DROP COLUMN "prompt_tokens";"""


MODELS_STATE = (
    "eJztXWtv2zgW/SuCP6WAp4idNE2LxQJJms5kkcazabIYoBgItEXbmkikKlF1vbP970vKLz"
    "1IRVQtWVLuAIPJiDyyfHh9dV+8/LvnUgs7weuLse3YbNl7b/zdI8jF/I/0UN/oIc/bDYgL"
    "DI2daC6KTRoHzEcTxi9PkRNgfsnCwcS3PWZTIiaPCDZ8ujA87BtHM5+GXt+I7tk3JnNECH"
    "ZevTcWc8QMNuczsYOWhsv/5TMZ5gPYx6/FJ1l0wj/KJrN93jQk9tcQm4zOMJ/o81t/+dKL"
    "7idGozuKP9b3NG2r9+ef/P9tYuHvOFBNx0QwtZ7rPZlTGztWgm1+Iz4UXTfZ0ouu3RD2MZ"
    "oovuzYnFAndMlusrdkc0q2s23CxNUZJthHDIvbMz8U/JPQcdYrtVmS1dfcTVk9fwxj4SkK"
    "HbGKAr16gN21nmnejR7Mz9cPptnLrPAGEVuf9aUJJUI6+KMG0befiUf4ZTg4fXt6fnJ2es"
    "6nRI+5vfL2x+qjd8SsgBE9dw+9H9E4Ymg1I1qAHanbhUjyejVHvpzYLSDFLX/oNLcbJvPI"
    "3VzYsbv7SdRBr4u+mw4mMzbn/3t2msPlfy7ur367uD86O30lPpDyX/Dql323HhlGQ4LulI"
    "bQoXcL6CC9wzdvCvDLZykJjsaSDMfUTHHtkAQ9ryXKUd0+PbGjdaOOM5xeUupgROS8xlAp"
    "UsccVpUAb3iugNYczi5Ho9voDRYEX53ows1DSm4fP11e3x8NInHmk2yG5WR7vk39tXGQYt"
    "ueKYU4jqpKhLNkH1crwO+Gw5OTt8Pjk7PzN6dv3745P95KcnYoT6Qvb34VRCcWJMv8Atuz"
    "OdPQHDtAZyj/KZ0hrLXpU8y0EBfGaPK0QL5lZkbokKrmZofcoZu+ggiaRSyJb/SjvzXBr1"
    "YKvSexzjdDudb5JDbpOetcza/EMk5ZvmDc1mncRtQUp3Uzvb5f9qDRxO6IfMKSd9MD/q4g"
    "cj29EyZsDk8P1388JCyAjaF69Onij+il7y7XI7eju18302MGwtXt6DJFNfW4EWWb1J8hYv"
    "8XRY+boV7tPyjg9S1Fr1eVTCd8icHwvIAvwWcpfYloLMk9wwEztV22JAqYLsJ0wBALAw3d"
    "vAPU5q21RTlH/9WQ1838qiQ1Q2SbBRUchD1K6sTH4pubzJZJbJ6vm0bWx23vH9OQTARzxt"
    "qhGKMAvyZ08c/KxPogrnD0GtNfmQSsMyJfM/c+Djz+HFjBv5L8DK4zC7A3nSN+rWboa1l0"
    "cUzn7Lk3g2GB1ySfpXxNRmMpryWKd2QoVruIW0AH+K3bRRwjB5GJRE98dChS8B3DpBifCl"
    "DbtEQO5R9Gj5e318bv99dXN59vRncJkleDyXj8/fXFrZxhM/SskgaL6g6dUdA1vyF3Mdui"
    "GmaHABWjrWLaUBaw/bOW12Ylyesw4Krha0gZ0tMuSRzolJ/QKaaLPE88m65qiQNBw2hrmF"
    "VAj5Nq4TJLoIDDQmgvBBQfHEr/oJBRc4wk+R0l7XEIpCnThEZOpWmTKdV2Rbco0CDaGkTY"
    "STbxQmYy+oSJTlpHBu2MOtlf3HxTrqgp2WkcyLa2bDMkMUtycsGoUjPkUKm1/RdGT9Bkjk"
    "2PK15pbYk6EZTGwVsw49ZEOnXqaCYu0zBQww2qb7yls56ktlFc7ufVNTrrCVXWNH7ZZmcR"
    "6/GxLyI84a9r69NDmxq7zHXx+jc3pQnp0ZXDrRpNVvPHR6Hcss5yy9iyF2Q2hqhP3TSe4W"
    "zBBJIo8iLlEqhmTf5yiiWaXlncJiGnhGEikfAcx2YHAZ9G26cRWle3aDCOAe8mvhIy7yZp"
    "zRR2HhOoDgh2PTRrWRxxCHg48oyYrtwmUZ2T20oyvyWSvpDv/UmjzfOp65UIUmdwnVmAPd"
    "pwrudg8RT69EqxQHGa4lC/PDiEyuAcQu3A5LfHyJWo4bwmBwlcjW0Otlda2+egwb062ivG"
    "rSjVa6uHAXXtNcYlfMy/dMCk6kEtzklUKdrXgYeGROkrEOmGZLE+2dZfNPQJlrbRi43283"
    "JabnIetOuoTTIrzh+JYk4tv8ECy1blKjQvEdc+SYVAY2WEooluY5MdogOWVfIdf3pc4B1/"
    "eqx8x4uhVBz3L00jagvoWm5n8G5QpCnEu4G6KYQYkwUSddyCHaID0lv/DoUo/ool+uI5xt"
    "cgIF2b9PhjatCeggHxpTZGSczg/K1QXcm81U12swussi/Nl1JfFYRj1y7TjiYF7IzlXTf/"
    "DPml6E/ggP1y7E9tYgfzEvSngMB/Of5tF80UTYPUr+EECF7FJTeE6zityp6Qrfdah0UiAk"
    "N1RGCYiQhwd2jm40CL3zimawyfFGH4RM3wSYbhKbIdk5uFgZ7DlIKB4tC34aGqYP8BWqhP"
    "rN/sGIeMUVnpnFp7xCCgOcoEFj3sMxtrcZ5EAe3atDs46q9JmC0xsPM0TAoIeqacnlnRSB"
    "dEVtqkNgdTsA4IftVpuLHtOJp9rWKQDhBch2ZpSG3TaENOpq5ptM2GqGua6G7OQeqZpE04"
    "1Kpgrwe8NKjabo9HCKjLnL4hJ9RK8GwBoBHapBH+LfyhD1wKZEphN5irFyKfyrQ28549OP"
    "g3GvrO0rBQMB9T/g0MNJv5eMalw6BT40iUeW0P/Z3zua+yxwSXu4X0UOBYVZm6gweUXELL"
    "jufUUeMZhs31NZ+pDJuU6zhbuV3VEdVribq7zEQ1xKLZtx7/SRyEScqxP6GhrCtNzn6EUN"
    "qSpr2EQzahxeL7TLeD/ObeXW14ULcKibqVllmCNBJWoGQhG/pW7oiNFBD4L85/Q+Iv99jC"
    "rjIqGxvt50Vg/OQ82G1as8n90kMfbTHxIIOwqisrcrjiifpsxZPM0YoNPCo7K6Vt6Y0OZ2"
    "VXFZVrh4s3OBb/tN7CgkO1W7I4wnrEbqnVyUA7Y3PUvAbRYYmlrL0ErDP0d+E8jM+YMYf/"
    "OgjrSXy72Gg/z7cLkvOeza7fCFeQMkwmS8PHE+pb7w1KsOHTheFhn19z0BJbxrollbGY0w"
    "Ab65IuflXEdCyDe3+G8EoilZdJv1f0GeB9Nsv7PFivs4bRXLFV2hInv/GCDK2QIDfWIZOw"
    "ZYUNnXaXGmJRPqDgSWZLRtdzrUi2mQG5gXa91HI6UYJ+aIx+SJhznlVqXZI4iHPtv1KN60"
    "BNXyYG6Vp0vZqmgw5iU+pLTivI6eAQw3SN5P13cGiks9i+1yr4itUfBA+tLsABb7O9AP2f"
    "K914Dr20quylBZ2eDtUiDrqCQlfQF8s+dAU9+IYaaKFYdZNK6Md1gFb/SOb/5PT4R1LnB6"
    "h+nmpofQatzxoh+ND6rAOapSmpcxGz7cly59FAPzd5vp0C2fOEYDY+zN+ynXXtIxj21qXf"
    "UkWa852qe/OdnsPeOthb18IqZtjipSPQtaeyJjgISq1OBgrLs/flwd892y+1OmlkfYvzS8"
    "Uqv/ZNkC5/gjJNWNJICHuUrJskju3aLKcTDqUORkRhnWfRqYUYc3hVK7G9Uq+Tfjka3Sac"
    "9MubtBf++Ony+v5oVcTHJ3GGFOwH5VoQJXEg++Vkf9X4M5LgwMREECNrp5j3A1DdAn4FGr"
    "+COIk6YcE0DmKD2lkH5Dh0YdqeFu8JEJCuTfrMp6Gn4w9vAR0guwqPuDHRbu/R60mj3WKg"
    "nx/t9szVGj/fbOCCGJQbXgQbHlqKHgUG9S3sZzsG5E2E0DiExjsdGkeuvEtzbtjF7Vyn5t"
    "ptaiJLSXx0KFJacUSalZgKSNtIz+Hvw+jx8vba+P3++urm883oLmE8rAaThvL99cUtbEg4"
    "uERPQt8XPXd0DLY4pkabLQw2j1Kx2VYk3abOtmWSbfxzLGwSqkNxHNO5fOb+E0UBDgL+SJ"
    "o7cZOorqXjKjkZZW1pmy43q6kW2VlkjapDEOfhenjffyfcVTKzdBYUsmxVnpXieg4utzhp"
    "KJgwpXfntGDTn4eJta7yrF4HDc6K9GE4U7dhOGtQ4OkxiAI4mbhTdL2fF3YKNzOgxrI2S6"
    "+GQNLhjxnstDHtoSBYUF/TutthOhfGr8SStuzAc9BS+zzHNK5zbO9foH3qSChWF9+sp0Ol"
    "a1FL64BlwxnF2xYuRYWXZC+c+oe/BXQtULHHw+djWWibzcOxZkAoAeoazfvXq45Nwu8W1S"
    "Q5iQKWi7Ls4G9YojDUO2fTuM7EF/amgxd4Mke6vegTIBDf58SXYQfPfOTqdslMwoDn53he"
    "7akwt/tKixKdxpViek3jy/CPIU19oLOMoJT8YBtZVsev6J4Mn8F1ZgH2ZoI0r1o2+0rc/N"
    "lSfY2mU86fpRVli2O69kbcf4J6xZaebkhgQC9k6js5PSXedwlYZ1ite2czJ3FuB4z6y7Jr"
    "kIHDWpRbC5t8s5lu7XgSVFvouS26BdoqNFjg+XfDZY56SeJKLUzaZmnEjomXcxLXBfbtyb"
    "wnqXRZj/Tzal3Qbg5Uu9Qso5VVu3zDfqB5XkAMUl9pQG2+SyWlGOJHpcHwenoH2R0cF+mH"
    "yWepM7HHmY6Y/BMZlrmG//o8ulOVxm4hKZYte8KM/xkON69byHYOuYIMcWf1Vuz0rmtBDg"
    "2YaLO9ucHBe2P++D/Ilsgr"
)
