from tortoise import BaseDBAsyncClient

RUN_IN_TRANSACTION = True


async def upgrade(db: BaseDBAsyncClient) -> str:
    return """
        CREATE TABLE IF NOT EXISTS `budget_usage` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `user_id` INT NOT NULL,
    `owner_kind` VARCHAR(8) NOT NULL,
    `owner_id` VARCHAR(64) NOT NULL,
    `identity` VARCHAR(160) NOT NULL,
    `window` VARCHAR(16) NOT NULL,
    `model` VARCHAR(128) NOT NULL,
    `window_start` BIGINT NOT NULL,
    `window_end` BIGINT NOT NULL,
    `quota` BIGINT NOT NULL,
    `requests` BIGINT NOT NULL,
    `tokens` BIGINT NOT NULL,
    `soft_alerted` BOOL NOT NULL,
    UNIQUE KEY `uid_budget_usag_user_id_76a479` (`user_id`, `owner_kind`, `owner_id`, `identity`, `window_start`),
    KEY `idx_budget_usag_user_id_2c8183` (`user_id`, `window_end`)
) CHARACTER SET utf8mb4 COMMENT='What one window of one limit\\'s owner holds in the database: the charges of the settlement';
        CREATE TABLE IF NOT EXISTS `mcp_server` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `name` VARCHAR(64) NOT NULL UNIQUE,
    `description` VARCHAR(255) NOT NULL,
    `url` VARCHAR(1024) NOT NULL,
    `transport` VARCHAR(32) NOT NULL,
    `headers` LONGTEXT NOT NULL,
    `oauth_token_url` VARCHAR(1024) NOT NULL,
    `oauth_client_id` VARCHAR(255) NOT NULL,
    `oauth_client_secret` LONGTEXT NOT NULL,
    `oauth_scope` VARCHAR(512) NOT NULL,
    `groups` LONGTEXT NOT NULL,
    `tools` LONGTEXT NOT NULL,
    `price` BIGINT NOT NULL,
    `timeout_seconds` INT NOT NULL,
    `status` INT NOT NULL,
    `status_reason` LONGTEXT NOT NULL,
    `test_time` BIGINT NOT NULL,
    `response_time` INT NOT NULL,
    `tool_count` INT NOT NULL,
    `created_time` BIGINT NOT NULL,
    KEY `idx_mcp_server_status_a0f3e1` (`status`)
) CHARACTER SET utf8mb4;
        ALTER TABLE `token` ADD `limits` LONGTEXT NOT NULL;
        ALTER TABLE `token` ADD `mcp_tools` LONGTEXT NOT NULL;
        ALTER TABLE `user` ADD `limits` LONGTEXT NOT NULL;"""


async def downgrade(db: BaseDBAsyncClient) -> str:
    return """
        ALTER TABLE `token` DROP COLUMN `limits`;
        ALTER TABLE `token` DROP COLUMN `mcp_tools`;
        ALTER TABLE `user` DROP COLUMN `limits`;
        DROP TABLE IF EXISTS `budget_usage`;
        DROP TABLE IF EXISTS `mcp_server`;"""


MODELS_STATE = (
    "eJztXfGTmziW/lco/7KdLU+q293pZFJXW9ud6dnNVSY9l3TutiozRWSQbaYxYkC049ub//"
    "0kwAaBwIgYDJo3VVNpI30YfxJPT+89vffvyZrY2A2f38wd16HbyWvj3xMPrTH7o9g0NSbI"
    "97MGfoGiuRv3RblO85AGyKLs8gK5IWaXbBxageNTh3i8872HjYBsDB8HxtkyIJE/NeJ7Tg"
    "1rhTwPu89eG5sVogZdsZ7YRVtjzf5nPSlmDTjAz/k32cRiX+V4y2PeNPKc3yNsUrLErGPA"
    "bv358yS+H2+N78j/SO9pOvbk11/ZZ8ez8VccVnXHHmcq7es/mgsHu7bANrsRa4qvm3Trx9"
    "feevTHuCP/sXPTIm609rLO/pauiLfv7XiUX11iDweIYn57GkScfy9y3XSkdkOS/MysS/L8"
    "OYyNFyhy+ShydPIA2bWJab6/fzA/3j2Y5qQ0wjtEbnzSSxbx+OxgjxrGv37JH+G72cXVy6"
    "tXl9dXr1iX+DH3V17+kXx1RkwCjOl5/zD5I25HFCU94gHISN0PhMjrmxUK5MTuAQVu2UMX"
    "ud0xWUfu7kLGbvZK9EHvGn01Xewt6Yp9vL6q4fK/bz68+efNh7Prq2f8Cwl7g5M3+33aMo"
    "ubON0FCaFC7x6gIb2zFy8a8Mt6VRIct4kM58RMc+kggg5LiXZUj09OZLTuxHGJ01tCXIw8"
    "Oa85VIHUOYN1NYF3PHdAaw1nt/f37+IVLAx/d+MLbx8K8/bTT7d3H84u4unMOjkUy8n2A4"
    "cEqXJQYNtZVk7iPKqrKVwm+7zbCfz9bHZ5+XJ2fnn96sXVy5cvXp3vZ3K5qW5K3779Byda"
    "GJAy8xvsLFdUQXJkAG0o/yaZwbW1xWNOteAX5sh63KDANkstZEaq+pab1rN18Qry0DJmif"
    "+iP6aZCh7ZDr3zaCBX0LPWeh2d9zPxvuMhPb2aaYmOXNKBrQDziWIiOmFtnyfsm0iQLkmS"
    "Nv6VkhaKAvYdyTSMf0v8sXwXUKv7VKvjOSTVSapVvzzmONrfaSkWdL/LWQPV73JWqfnxpo"
    "Lil01upWVTxPUnxSf/sYi8+DU2UrE0RyF+7pHN3yZaral5OdZQrOQhsK7KCY0/KYgTEdXf"
    "dnLS2WzueK+eEBaw7Y3yzN2BYO5WCAMlE1MeA/O2ybxNdUMFglOEhlam4xNcULGbslyAaT"
    "eTj6/SCZsXRZqPqTcPiOSL2asGLLNelTTHbVKeFZe6AqrVWpduQAYjOY682s3xggQSTh/w"
    "1wpSM4QGU7eGq4e7fz0I1tLdBD376eZf8dxdb9OWd/fv/7HrnpvQb97d3xZXvgXFgQrbew"
    "CQ3YjsgVj3biObSZ5PIYpf15J5L988rbPvzeOOZrTvedAR/z/cHU48bGzYGJONQRbxJ9dZ"
    "O/QvoUE2bMIYK8J+hOF4sd+cm4T4xv51/MlacaEZchz/GGJKXbzGiawUvPOdfdMvXoAtEj"
    "AcI8Z1sG2EhP3cwDhDvvM8xMGTY+HwecJN+NyOAk7Xs6mBPJt7/bn90nBoyGALaiAXB9TY"
    "IPaR3fv5L94v3o0RsbuwZ4xdw8kTsy8LMLsD6++SDfIsHIcd8I5T/v34CQfbOBphjl3iLU"
    "ODEgPF7cbZF/4PW9C/JA/xi8d/UEKAExp88G1jvo2f6ZGRFT+oY782HvHWOON9KXnEHnsg"
    "x2Z3SO7JL6ePGV9NnvWM34Pf8Bn7JV8cm/0kh26/8K/hgB356ZDw74lnFXtEG22/TA3+z9"
    "+XPv3uxV+/PHu9++khGwo2quwB4z9xEk9BNtXRE+kPjl9C/jtN/ruyT0nL7vH438kTmSFb"
    "k6kkvCJ3v7Qn9iC0omcbcG4QGjKbQ/RnSRg8wxmj4rvRdIMgojTc8TbZIVTvD0q7g7zMUe"
    "O47z3YiG0KeWHelOQ8RkOSL67Pm2x1r8+rt7q8reDgj5c/FZYzhJYcN6K4huExRriN2VYj"
    "aHolmuscnUWkTipF32FCmRLdZgiwVPWAAWg+AL9HhCI17vcQbZxyPXMeYPbLQxqq0Z5HAf"
    "PtmI/tF4q8ZxhgvR3r3L5lxvYt5bjnIrTH4Of9lVFFPw/EsPwmOQcwkRiVd03TOoOylevU"
    "ZbAoGO76NNzJHf3Vklfu4O9Q7l4MmtiMyEcssW9Ue+fS7lpsu/t2hRIfe8gxSbBEnvO/SD"
    "UiqAIOW/RG4RRM3zWV7SAiCphuwnRIEY0kinGlbM4AvR3yG4twVo0n7jqSuETkmCcqnCs7"
    "4kzdndigjmzGNjnrsUPCaY/j2yr4MqY+MgJMmynfu4Uu9Nlz4Ar+a2x0BZw2A3C8SE72tp"
    "pRoKTR5THa6XMvLpqEe7Nelctk3FbYtcT2jhLF1VvEPUADfvveIs6RywPxynT/6BJUFZ6c"
    "YQqMLzhobFKihvIf7j/dvrszfv5w9+btx7f37wWSk0bRkPnh7uadnGEz8u2WCkvVHbQR0D"
    "2vkJnNtqmEyRAgYpRFzBiySe3/7GXZ7CTnURQy0dDCJS7iQKZ8g0wx18j3+bOpipY8ECSM"
    "soRJDHqMVBu3GYIKOAyE8kBAzqqT5deIKDHnSOLfqc5SkIOAm7J0rIBvKk3HWxDlregeBR"
    "JEWYJwPcnx/IiaVfFOlfNZBtVGnBzPbr7Lcqk4s4s4mNvKc5siiVpSl8OgUzXkVK614x+b"
    "sZC1wqbPz3PJYkuqHUFFHKyCpW1NLFMXrqLjsggDMTyk+MYopGR9fxPR1c8BeXLsOLqwHO"
    "so6TatjXuMASZheuXK9FNI3AXCILUJgxxagEiv8XtdL2ShGylpCLv+2iUG7eBoraUW+7jr"
    "r4Ga20Nkk+rp+/7P3U+SZYnb+Prh+fiJ0MaUfX+cB1CETYXrYE817ZwA0k50zF40OSjOet"
    "W4rUpHxVPKQmwFWLLFOMh1BtSO706ia7gYJEEazs8PIfskVXObEl99BxiBJiMQWydbMV9G"
    "AuNNGE9SKHkL0op1ORqYb8J8aBF+F5U9zR7Rp3LoY8+xDT8gC8fFBl4jxx3xmuqEYSQLoa"
    "zZ7uwRMK+braI20z5kcZN162aG0Y7lTubxb5vHUDXeOo/RjuVO5vIGu6756JGNkoFERAHT"
    "zfUQO7VVK6sgOWCPfIfRfMSWKc4c/7sd5yKyR9L9AC9wEGDb3D3GiMfAdkLfRVuz3TjI0T"
    "2OxcjZj5VZddoLsB757lH77oTw2NAc0q2rVDJIAIG/vOq4LxR2O0R5z4Gnu0NJqgMj4mBg"
    "jjIwA4kweUeWE0lECb88rYsgcdMO/ZZYzSVYL9VR3SZZnErXY0PsTjEotiZHOqpaxTLjUI"
    "31VJEskIkf1miNlwLB47QdeO66MU1y4lEscyDVhM5nEA3sZH1HzecNIKq2my4p1yd+XtRm"
    "1JzRUEpYkWYljSMPAZuA/My16rwVUdrN205yC0Cm/f6VNj8ga7/FMcgSTpsBOKIOt/ZdHI"
    "evKdMrxQLFJbOgegK6CHLP1RDqhCa7PUZriRiui/8WcBABrhIBLhjqmooHAQTTuEjqKJJB"
    "jXWHAZkTe7RLpDWNFE+IiKhWtKeGh4FY6TuY0gPxYv1k+R9x8CQ/HZ01Tus8WmvLN8OsH5"
    "yD7m1ean0OWrtXXggXyz2WAsMFmAYrWh9JI9WCq3uPq+5tGl+cz5pMZN6tOhYsbiwYfQPk"
    "hT6RlWmtMa3nQX2G+sYbRX4Lc0Wp38+8Pv5B6RVGu8wjTRXhHEQDwdG3KpycrU+cFYoSRQ"
    "LVYAD6kS1pSoM2B9UlUO1o72TBFIirOrRes+GWwzXg/jQyJz4tqj7x9zANiO/h3FJsg1Na"
    "TzOEBgz3PbUpIWrlCfYAILtNymrZMd4D+aqlp3jHa97vOx7RWWMSxQsg8WwV76sE2d8gXI"
    "/FyQIVMY/Npck2xqHMHnWwqkAGBOGsvhJCHcGTCWmoI9iZTOH6GmMskoWR18SC5kFAKhSE"
    "HbgwGYob17F/I1Hg4e1E5sfNWqe1jlyxHzhyhXk8YkfuLiNs4/BPGxY1qfwd5HnK8c1UOC"
    "/SGaHIUo0pyBAabN5EQ/HVeQM78dV5pZmYNxWO4/ym6ITaA3Q7onfx/UUTf9/3F9XuPt4m"
    "Ow+iYoHIEBrM3v7twvExGqxk8xFAQLoy6bWhX9W06xf61Tfx3FgpUYPrrZu6eFD7JnvYeT"
    "LKi6bORgrhJYjma6eNvbkA1Ebz7pt/ioJW9As4YL8d+wvHc8JVC/oLQOC/Hf/OGi2xPHyy"
    "ehkWQLAUt6wcr7JprXSVj37XOmtiEZhVWwRmJYsA2w4tAxwq8ZvH6MbwZROGL6sZviwxvO"
    "BJetVjEwowEBzqOjwcDj++gRbSzPSvdswjSoksA0q19MhBQHK0MSz6OKCOrCxSrWUxhwLa"
    "lWl32WrHNGWPOhIFu07CFIAgZ9rJmYRGsvHUClMVYBpM/K7dcHPHdfn3qwj0DKIBwX1Ilo"
    "HENt3vyCnFNd3vvSHVMU0k63OSeKbHJJiqqShIu2uXQeGIRUiqw5yekBspOXj2AJAIY5II"
    "P6MwZC/KmwDbmKksyJUJh3KnWjnhJ91Na98/PJ3QgCDIP0sthPERPJT0QAPSb4+fHiiTQo"
    "rhZiWgdppEJ4e//WjuOpYpVdZq7BUCSouEQX1bLBDl59hQkmp4q5bmQIbts2Qi8XoqmdhJ"
    "kg+ElpGabMkQIMEPSvDQWXpVx99q4zwEHBji2hniLJe9nCbbaXhSK1FtMukSFhJKKySUjn"
    "XmJxw47Hsk0qWW+RIWmFdgnu+tI9/ErrN0OBFq3EvQwL46+xUxxk2or4o2Bt7reN+nkVRL"
    "JiSgNFBnThXeDQfRB6j9uCikJltM2wxPGQs66OjSAfwXDxj6AVE0kRjGs8ZpnUE8Djoy7V"
    "2/Q3bwyT9JFLhbw0bhak7YLzDQchngJZsiBlkYZ1y3mybv3dRYsb7Pnk8Kg9fyFhI7u1Dv"
    "uLpSMZjjwRx/QltbF8kJoIhol0YdKMbYl3VyZMcHu5cSfWevTJKVh1IbTl1WOgEHqmNL86"
    "Vi2jT97MUQbj/i6Xugqmt92mFdC7v2LUKQtcKthqCIhBFoedIbPTFFpIX8KQCB/9HZXz5g"
    "G68rw5ZzrdM6C0wg9oNIxJ5V7j+76WMsKh6E2HdUY2yAKfbLs3QsOfaHFi2rj1VuHFu8i3"
    "P+3+g1LHACj2RwuPaI161GpwTVRufoeQxiP3orbU+AaUP/Ny2mA9nbfcSUuuzt8OhEsrfL"
    "tU7r9nah2O+gd/0t3woSij1rawTYIoH92iAeNgKyMXwcsGsu2mKb/csGO6TGZkVCbKRnnt"
    "lVbtOxDbb7M/iuJBZ5Jfd7R98Bu89h7T7T4VM8WCSitNs8HV8rHckmf/ATGWoFgG9MI5Vw"
    "ZIENWm+XBqJRPqDwUaZLxtdrtUi66wG+gXEtajWlmkA+DEY+COqcb7caFxEHdq7jR6oxGa"
    "i4l8lBdLOud1OVx0V0QYK1Csd5jG4kHz/F8SA3i+NbVmGv2F3lWcgFDRtwHfQFKJDYaWZW"
    "KDbRZbEJKIVwqhoqUDYLymb9admHslknP1ADNYa6ruIEBStOUAsXyfY/NUVwkXTzA1Qfph"
    "pqg5w4KQ/UBoHaIFpKFhu7uI1rTMSBXBlf4AK3mE9kkQtxw7Q2dGHfBWIXhNk5eCfLyM41"
    "jo9gONlY1BGa1A66qi4ddPUKTjbCycYRxpDDAbuBKV6iI9HCYbskqyUoDM/Rhwd/9Z2g1e"
    "gUkf0Nzncdi/zej6Cu2RO0SYFTRMLmsGXUquc6a4fW5CGqrcdQRkNuerVaGK0SQIk4mPvt"
    "5n6SdjWewaGJPU6MakGSqlvAW6DwFuRJVDHKFnFgmVWvrua6ZGM6vhLvAghIVyZ9GZDIV9"
    "kP7wEakN15Bm7LNykTt2qSJA/SgOTeXcfKshuk9jgraz8Q/5M/kXp0eMO03qPjm4kcO5zO"
    "5MYzCNtceNjw0ZZnQTFIYOOgnJOkriO4f8D9o7X7B63V64dmGNg3tt03ejK3248uQZU7FU"
    "/qeVtwyNhIr+Hvh/tPt+/ujJ8/3L15+/Ht/XthfUsaxc3gh7ubd3Dk6eQz2oqCgGf1UtmU"
    "5DE96nBRuHuUjrcmTVzK1R7lkkOZfY+NTY+oUJzHaOez76CiNg5DXupd7ay/iNLN5dxJ7a"
    "VU0zbXTK0mSmSXkT2KDk6cj/vh/fi5thOHfWtPP3iSu6zGtPZ5pGqbwSlCQYVpff5vBMeK"
    "fezZaRx59zLo4rpJppfr6kQv188GZHjakB+RRUkwkRmf9o3TWgPUhj0AChtZoCCoeFhGj0"
    "FblTTgN69GM41BYlSqU6F3iP60ud72KZ1o0E7bgAOnnzCD0vwdf5RBXLc+pFjieT1Y7n4H"
    "A+Xs23LaQpjyAAcnlSdt4mALSHg9xndCb6c537LbRf4bdnVSp2DnujVQtc153J1NGRt3oH"
    "Z/zmty/DvMFQpXk19BHf9zq+N6OXmzia2gkgsgDbXyTspxtFkDo28+pZPOzcHwDBoiaIiD"
    "0U8+hVhq8Yuv12og0a4HWPrGtfLVqxaqZ4nzGPChH1wFfRSGGxIoOnUzjAbRvD2Y/2wn9F"
    "20NVUncxGnHdvHn9ABcSUUV58rTbtDEoemDtYTZsQoCd6xcMkPL0uS7FW/+HuAbvFJF7Mm"
    "cXasV7WXelaKtVs6dBXNFePABJBuNB9frrqOF321iSLJIgpYbsqyi5+wRGBUe62KOG1M80"
    "eTwRtsrZBqkVsBBNP30PSl2MXLAK1Vy2+JMOD5EM9JuiBznzKxKdFFXCumi/ZLrffHcDrl"
    "BDlqIEvKSXM0JXXdLflRw5oMTQWcNgNwNBVkeIkgykvi7s+Rymu0WMTRB0qrYg6j24p4/H"
    "MpCVtqskHAgFwoHetm9LRY7wSYNqz2nbSTkbhyQkqCbdsxKMFhLNqNheM9OVQ1mkgE9WZ6"
    "HotsgUCLAU/4ExbKOByFdIJIgr4r8EAaqwr+dEtjxcOH7m8iurp1kgOZFSFGQp/poXAjky"
    "DW3Zwn/bsOePYD8uTYyUf2Yz8LF/LtOwzERZ86eGlwcdGniCw9mipTmO8NWS2+JRBxXk1s"
    "5ZytrSpawmoYfz570eRwPetVExZ2XVXNQ1X9E3Ggl+sUAH2DA8dayfSTtKVWK0FZHwiDHp"
    "c4rtYknnDAM1apSOUcREth3EGMLn+pFBhOu2vI7sV5kwqsrFd1iN55qQYr+0aKZT6D//x4"
    "/75ilcsgBZZtx6LG/xmuE45RLa4hl5NRv+0u7rA5OSSkvLD77gYn33b/8f8xBK18"
)
