from tortoise import BaseDBAsyncClient

RUN_IN_TRANSACTION = True


async def upgrade(db: BaseDBAsyncClient) -> str:
    return """
        CREATE TABLE IF NOT EXISTS `ability` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `group` VARCHAR(64) NOT NULL,
    `model` VARCHAR(255) NOT NULL,
    `channel_id` INT NOT NULL,
    `enabled` BOOL NOT NULL,
    `priority` BIGINT NOT NULL,
    `weight` INT NOT NULL,
    UNIQUE KEY `uid_ability_group_e06dcc` (`group`, `model`, `channel_id`),
    KEY `idx_ability_channel_c05541` (`channel_id`),
    KEY `idx_ability_group_fd8803` (`group`, `model`, `enabled`)
) CHARACTER SET utf8mb4 COMMENT='One row per (group, model, channel): what the relay may route where.';
CREATE TABLE IF NOT EXISTS `channel` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `type` INT NOT NULL,
    `key` LONGTEXT NOT NULL,
    `openai_organization` VARCHAR(128) NOT NULL,
    `test_model` VARCHAR(128) NOT NULL,
    `status` INT NOT NULL,
    `name` VARCHAR(128) NOT NULL,
    `weight` INT NOT NULL,
    `created_time` BIGINT NOT NULL,
    `test_time` BIGINT NOT NULL,
    `response_time` INT NOT NULL,
    `base_url` VARCHAR(512) NOT NULL,
    `other` LONGTEXT NOT NULL,
    `balance` DOUBLE NOT NULL,
    `balance_updated_time` BIGINT NOT NULL,
    `models` LONGTEXT NOT NULL,
    `group` VARCHAR(255) NOT NULL,
    `used_quota` BIGINT NOT NULL,
    `model_mapping` LONGTEXT NOT NULL,
    `status_code_mapping` LONGTEXT NOT NULL,
    `priority` BIGINT NOT NULL,
    `auto_ban` INT NOT NULL,
    `other_info` LONGTEXT NOT NULL,
    `max_input_tokens` INT NOT NULL,
    KEY `idx_channel_status_ede6fe` (`status`),
    KEY `idx_channel_name_24c7bb` (`name`)
) CHARACTER SET utf8mb4;
CREATE TABLE IF NOT EXISTS `log` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `user_id` INT NOT NULL,
    `created_at` BIGINT NOT NULL,
    `type` INT NOT NULL,
    `content` LONGTEXT NOT NULL,
    `username` VARCHAR(64) NOT NULL,
    `token_name` VARCHAR(64) NOT NULL,
    `token_id` INT NOT NULL,
    `model_name` VARCHAR(255) NOT NULL,
    `quota` BIGINT NOT NULL,
    `prompt_tokens` INT NOT NULL,
    `completion_tokens` INT NOT NULL,
    `use_time` INT NOT NULL,
    `is_stream` BOOL NOT NULL,
    `channel_id` INT NOT NULL,
    `group` VARCHAR(64) NOT NULL,
    `other` LONGTEXT NOT NULL,
    `request_id` VARCHAR(64) UNIQUE,
    KEY `idx_log_usernam_15f699` (`username`),
    KEY `idx_log_created_c48995` (`created_at`),
    KEY `idx_log_user_id_ef6475` (`user_id`, `created_at`),
    KEY `idx_log_type_a68811` (`type`, `created_at`),
    KEY `idx_log_token_n_7160f0` (`token_name`, `created_at`),
    KEY `idx_log_model_n_79818d` (`model_name`, `created_at`),
    KEY `idx_log_channel_736d12` (`channel_id`, `created_at`)
) CHARACTER SET utf8mb4;
CREATE TABLE IF NOT EXISTS `midjourney` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `code` INT NOT NULL,
    `user_id` INT NOT NULL,
    `token_id` INT NOT NULL,
    `action` VARCHAR(40) NOT NULL,
    `mj_id` VARCHAR(191) NOT NULL,
    `prompt` LONGTEXT NOT NULL,
    `prompt_en` LONGTEXT NOT NULL,
    `description` LONGTEXT NOT NULL,
    `state` LONGTEXT NOT NULL,
    `created_at` BIGINT NOT NULL,
    `submit_time` BIGINT NOT NULL,
    `start_time` BIGINT NOT NULL,
    `finish_time` BIGINT NOT NULL,
    `image_url` LONGTEXT NOT NULL,
    `status` VARCHAR(20) NOT NULL,
    `progress` VARCHAR(30) NOT NULL,
    `fail_reason` LONGTEXT NOT NULL,
    `channel_id` INT NOT NULL,
    `quota` BIGINT NOT NULL,
    `buttons` LONGTEXT NOT NULL,
    `properties` LONGTEXT NOT NULL,
    `lease_until` BIGINT NOT NULL,
    KEY `idx_midjourney_user_id_4191cb` (`user_id`),
    KEY `idx_midjourney_mj_id_73552e` (`mj_id`),
    KEY `idx_midjourney_created_b5bf9d` (`created_at`),
    KEY `idx_midjourney_status_71d61b` (`status`),
    KEY `idx_midjourney_progres_1c0f93` (`progress`)
) CHARACTER SET utf8mb4;
CREATE TABLE IF NOT EXISTS `option` (
    `key` VARCHAR(128) NOT NULL PRIMARY KEY,
    `value` LONGTEXT NOT NULL
) CHARACTER SET utf8mb4;
CREATE TABLE IF NOT EXISTS `quota_data` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `user_id` INT NOT NULL,
    `username` VARCHAR(64) NOT NULL,
    `model_name` VARCHAR(255) NOT NULL,
    `created_at` BIGINT NOT NULL,
    `token_used` BIGINT NOT NULL,
    `count` INT NOT NULL,
    `quota` BIGINT NOT NULL,
    UNIQUE KEY `uid_quota_data_user_id_4c84e9` (`user_id`, `model_name`, `created_at`),
    KEY `idx_quota_data_usernam_9dde18` (`username`),
    KEY `idx_quota_data_created_be5c4a` (`created_at`)
) CHARACTER SET utf8mb4 COMMENT='Hourly dashboard aggregate of (user, model, hour).';
CREATE TABLE IF NOT EXISTS `redemption` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `user_id` INT NOT NULL,
    `key` VARCHAR(32) NOT NULL UNIQUE,
    `status` INT NOT NULL,
    `name` VARCHAR(64) NOT NULL,
    `quota` BIGINT NOT NULL,
    `created_time` BIGINT NOT NULL,
    `redeemed_time` BIGINT NOT NULL,
    `used_user_id` INT NOT NULL,
    KEY `idx_redemption_name_5cc9f7` (`name`)
) CHARACTER SET utf8mb4;
CREATE TABLE IF NOT EXISTS `settlement` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `request_id` VARCHAR(64) NOT NULL UNIQUE,
    `user_id` INT NOT NULL,
    `token_id` INT NOT NULL,
    `quota` BIGINT NOT NULL,
    `created_at` BIGINT NOT NULL,
    KEY `idx_settlement_created_2b7995` (`created_at`)
) CHARACTER SET utf8mb4 COMMENT='Idempotency record: one row per relayed request whose billing reached the database.';
CREATE TABLE IF NOT EXISTS `task` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `created_at` BIGINT NOT NULL,
    `updated_at` BIGINT NOT NULL,
    `task_id` VARCHAR(191) NOT NULL,
    `platform` VARCHAR(30) NOT NULL,
    `user_id` INT NOT NULL,
    `token_id` INT NOT NULL,
    `channel_id` INT NOT NULL,
    `quota` BIGINT NOT NULL,
    `action` VARCHAR(40) NOT NULL,
    `status` VARCHAR(20) NOT NULL,
    `fail_reason` LONGTEXT NOT NULL,
    `submit_time` BIGINT NOT NULL,
    `start_time` BIGINT NOT NULL,
    `finish_time` BIGINT NOT NULL,
    `progress` VARCHAR(20) NOT NULL,
    `properties` LONGTEXT NOT NULL,
    `data` LONGTEXT NOT NULL,
    `lease_until` BIGINT NOT NULL,
    KEY `idx_task_created_afb134` (`created_at`),
    KEY `idx_task_task_id_6ec5cd` (`task_id`),
    KEY `idx_task_platfor_6e0d90` (`platform`),
    KEY `idx_task_user_id_1a29a7` (`user_id`),
    KEY `idx_task_status_6f529e` (`status`),
    KEY `idx_task_progres_06c076` (`progress`)
) CHARACTER SET utf8mb4;
CREATE TABLE IF NOT EXISTS `token` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `user_id` INT NOT NULL,
    `key` VARCHAR(48) NOT NULL UNIQUE,
    `status` INT NOT NULL,
    `name` VARCHAR(64) NOT NULL,
    `created_time` BIGINT NOT NULL,
    `accessed_time` BIGINT NOT NULL,
    `expired_time` BIGINT NOT NULL,
    `remain_quota` BIGINT NOT NULL,
    `unlimited_quota` BOOL NOT NULL,
    `used_quota` BIGINT NOT NULL,
    `model_limits_enabled` BOOL NOT NULL,
    `model_limits` LONGTEXT NOT NULL,
    `allow_ips` LONGTEXT NOT NULL,
    `group` VARCHAR(64) NOT NULL,
    KEY `idx_token_user_id_55c1a3` (`user_id`),
    KEY `idx_token_name_7931ec` (`name`)
) CHARACTER SET utf8mb4;
CREATE TABLE IF NOT EXISTS `top_up` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `user_id` INT NOT NULL,
    `amount` BIGINT NOT NULL,
    `money` DOUBLE NOT NULL,
    `quota` BIGINT NOT NULL,
    `currency` VARCHAR(8) NOT NULL,
    `trade_no` VARCHAR(64) NOT NULL UNIQUE,
    `session_id` VARCHAR(255) NOT NULL,
    `payment_method` VARCHAR(32) NOT NULL,
    `create_time` BIGINT NOT NULL,
    `complete_time` BIGINT NOT NULL,
    `status` VARCHAR(16) NOT NULL,
    KEY `idx_top_up_user_id_27c801` (`user_id`),
    KEY `idx_top_up_session_d6f4f0` (`session_id`),
    KEY `idx_top_up_status_b618f1` (`status`)
) CHARACTER SET utf8mb4 COMMENT='An online payment order.';
CREATE TABLE IF NOT EXISTS `user` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `username` VARCHAR(64) NOT NULL UNIQUE,
    `password` VARCHAR(255) NOT NULL,
    `display_name` VARCHAR(64) NOT NULL,
    `role` INT NOT NULL,
    `status` INT NOT NULL,
    `email` VARCHAR(128) NOT NULL,
    `github_id` VARCHAR(64) NOT NULL,
    `linuxdo_id` VARCHAR(64) NOT NULL,
    `linuxdo_level` INT NOT NULL,
    `wechat_id` VARCHAR(64) NOT NULL,
    `telegram_id` VARCHAR(64) NOT NULL,
    `access_token` VARCHAR(64) UNIQUE,
    `quota` BIGINT NOT NULL,
    `used_quota` BIGINT NOT NULL,
    `request_count` INT NOT NULL,
    `group` VARCHAR(64) NOT NULL,
    `aff_code` VARCHAR(32) UNIQUE,
    `aff_count` INT NOT NULL,
    `aff_quota` BIGINT NOT NULL,
    `aff_history_quota` BIGINT NOT NULL,
    `inviter_id` INT NOT NULL,
    `created_time` BIGINT NOT NULL,
    `deleted_at` BIGINT,
    KEY `idx_user_status_ec9fb9` (`status`),
    KEY `idx_user_email_1b4f1c` (`email`),
    KEY `idx_user_github__d48049` (`github_id`),
    KEY `idx_user_linuxdo_1e1cec` (`linuxdo_id`),
    KEY `idx_user_wechat__499272` (`wechat_id`),
    KEY `idx_user_telegra_66ffbd` (`telegram_id`),
    KEY `idx_user_group_2ee4ec` (`group`),
    KEY `idx_user_inviter_855528` (`inviter_id`),
    KEY `idx_user_deleted_80297f` (`deleted_at`)
) CHARACTER SET utf8mb4;
CREATE TABLE IF NOT EXISTS `aerich` (
    `id` INT NOT NULL PRIMARY KEY AUTO_INCREMENT,
    `version` VARCHAR(255) NOT NULL,
    `app` VARCHAR(100) NOT NULL,
    `content` JSON NOT NULL
) CHARACTER SET utf8mb4;"""


async def downgrade(db: BaseDBAsyncClient) -> str:
    return """
        """


MODELS_STATE = (
    "eJztXW1v2zgS/iuCP7WAt0icNE2LwwFJmu7mkMZ7aXpYoFgItEXb2kikKlFNc3v970fKb6"
    "JEKqJqyZIyCyw2K/KR5Yfj0bxx+PfApw72oldnE9dz2ePgnfX3gCAf8z+yQ0NrgIJgOyAu"
    "MDTxkrkoNWkSsRBNGb88Q16E+SUHR9PQDZhLiZg8JtgK6YMV4NB6MQ9pHAyt5J5Da7pAhG"
    "Dv5TvrYYGYxRZ8JvbQo+Xzf/lMhvkADvEr8UkOnfKPcsl8lzeNifs1xjajc8wnhvzWX74M"
    "kvuJ0eSO4o/VPW3XGfz5J/9/lzj4O4500zERTK3mBvf2zMWeI7HNb8SHkus2ewySa1eEfU"
    "gmii87safUi32ynRw8sgUlm9kuYeLqHBMcIobF7VkYC/5J7HmrlVovyfJrbqcsnz+FcfAM"
    "xZ5YRYFePsD22sC2b8Z39qfLO9se5FZ4jUitz+rSlBIhHfxRo+Tbz8Uj/DI6PH5zfHp0cn"
    "zKpySPubny5sfyo7fELIEJPTd3gx/JOGJoOSNZgC2pm4WQeb1YoFBN7AaQ4ZY/dJbbNZNF"
    "5K4vbNnd/iSaoNdH320Pkzlb8P89OS7g8j9ntxe/nd2+ODl+KT6Q8l/w8pd9sxoZJUOC7o"
    "yGMKF3A+ghvaPXr0vwy2dpCU7GZIZTaqa8dpBBT2uJalR3T09saV2r4xyn55R6GBE1rylU"
    "htQJh9UlwGuea6C1gLPz8fg6eYNF0VcvuXB1l5Hbzx/PL29fHCbizCe5DKvJDkKXhivjIM"
    "O2O9cKcRpVlwjnyT6oV4DfjkZHR29GB0cnp6+P37x5fXqwkeT8UJFIn1/9KoiWFiTP/AN2"
    "5wtmoDm2gN5Q/lM6Q1hrs/uUaSEuTND0/gGFjp0boSOqm5sf8kd+9goiaJ6wJL7Rj+HGBL"
    "9YKvSBwjpfDxVa59PUpKescz2/Css4Y/mCcdukcZtQU57W9fTmftmHrSZ2S+Q9Vryb7vB3"
    "DZGr6b0wYQt4urv8406yANaG6ouPZ38kL33/cTVyPb75dT09ZSBcXI/PM1TTgBtRrk3DOS"
    "Luf1HyuDnq9f6DBt7cUgwGdcm05Escjk5L+BJ8ltaXSMZk7hmOmG3ssskoYLoM0xFDLI4M"
    "dPMW0Ji31hXlnPzXQF7X8+uS1ByRXRZUcBB2KKnTEItvbjNXJbFFvm4W2Ry3g3/MYjIVzF"
    "krh2KCIvyK0Id/1ibWe3GFk9eY+cpIsN6IfMPchzgK+HNgDf9a8nO43izAznSO+LXacWhk"
    "0aUxvbPnXh+OSrwm+SztazIZy3gtSbwjR7HeRdwAesBv0y7iBHmITBV64oNHkYbvFCbD+E"
    "yAuqYlCih/P/58fn1p/X57eXH16Wp8I5G8HJTj8beXZ9dqhu04cCoaLLo79EZBN/yG3MZs"
    "y2qYLQJUjLGK6UJZwObPRl6btSSv44irhq8xZchMu8g40Ck/oVNsHwWBeDZT1ZIGgoYx1j"
    "DLgB4n1cFVlkADh4UwXggoPtiX/kExo/YEKfI7WtrTEEhTZglNnErbJTNq7IpuUKBBjDWI"
    "sJNcEsTMZvQeE5O0jgraG3XSh8KaazofKIpqxOVhUUGNt5pQZzHNl01aALEBH/si7OJwVd"
    "SZHVoXd+SuC7mz1zmx7OjS0tONymWk6VGo82myzie17CWZTSGaUzetZzifqUOK1GeZPB1q"
    "OAP6fLJ0bS9p65KQU8IwUUi43lZMQcBQNDYUhdY1rVZJY/pWsbL7/UayNVO6gk1C9UCwm6"
    "HZyOJIQ8DDUYdiTeVWRvVObmtJOVTINkCi4SeNtiCkflAhOpLD9WYBdmjD+YGHxVOY06vE"
    "AsVZimPzurQYStIKCHUjm98eI1+hhot210q4BvfXbq50doNtizeJd1eMO1Ej0lUPAwoqG4"
    "xLhJh/6Ygp1YNenGVUJdpXgYeWROlrEOmWZLE+us5fNA4JVvZvSo0Oi3JavjwP9ok3Jpk1"
    "549EFZGR3+CAZatzFdqXiOuepEKgsTZC0dR0R/0W0QPLSn7HHx+UeMcfH2jf8WIoE8f9y9"
    "CI2gD6lts5fHtYZjfy20P9bmQxpgokmrgFW0QPpLf50tgk/ooV+uIpxlcgIN2Y9PRjGtCe"
    "gQHxlSryFWZwcQ1+XzJvTZPd7gKr/EvzudRXRfHEd6v0QcgAe2N5N80/Q2El+iUcsF+N/Z"
    "lL3GhRgf4MEPivxr/ro7mmW4X+NSyB4FVccSeiidOqbUbWea91VCYiMNJHBEa5iAB3h+Yh"
    "joz4TWP6xvBRGYaP9Awf5RieIdezuVkYmTlMGRgoDnMbHqoKdh+ghfrE5s2OScwYVZXO6b"
    "VHCgKao0pgMcAhc7ER5zIKaDem3cNJYzfCXIWBXaRhMkDQM+X1TEsqQMZrinLVH+NNzFhf"
    "+UG3c/ZS9aHsv663n3faf71FNUk77PCrLwb5hrzYKAy+AYBGLqWRW6IR/i2sxvdcClRKYT"
    "tYqBcSy9N21vOePNfvNxqH3qPloGgxofwbWGjOHd05lw6LzqwXohhmcybfgs99mT/Fr9ot"
    "lGf2pWpv9H0OoDANGhs8pY5azzBsQW74yEPYytnE0YfdyiHXryWa7sWRVFqKXpxm/Ms4cC"
    "arsT+lsap3R0HVdqxs3NFdwiHm2jHxbYnnc4sd7GvjIanRYZHvE8rzYDdMt0zizjsdXVGu"
    "ELtb5r3LnDpypD905Ch35kgLz5DLS2lXWufCIXJ1+cPdMK4OD8Q/nbew4LS5jiyOsB6xX2"
    "l1ctDe2BwNr0Fyikgla0+C9Yb+PvTr/oQZ8/ivg7CBwrdLjQ6LfLtInvdkXutKuIKUYTJ9"
    "tEI8paHzzqIEWyF9sAIc8mseesSOtWqZYT0saIStiet5fFn4VTRd8FHu/VnCK0lUXi7xVd"
    "NngPfZLu9zb71YWkZzzVZpR5z81gsytGqAqHSPTMKOpRR77S61xKK8Q9G9ypZMrhdakWw9"
    "A3ID3XqpFXTKAv3QGv0gmXOrY4ZN10XGQZxr9zUiXAca+jIpSN+i6/U0RfIQm9FQ0U25YI"
    "dpCtM3kne/w7SVzmL3XqvgK9Z3DABsxQUHvA/2AvSnrLU/JfT6qLPXB3Si2FcLG+haBl3L"
    "ni370LVsv/xDi6cGmmhBv5A9tCJGKv+noAcxUjo/QPXTVENrluebYBSRrYEqw5gMDAtTjJ"
    "spkGOUpLP1wdCO7T/qHsGwAykbTSrTPOhY3zvo+BR2IMEOpA7WesJGmJYZXnLAf8rd4Eqr"
    "k4PC8ux8efD3wA0rrU4W2dzi/FKzym98q5jPn8CukI3MIsE5rFhdRjzXd8WLQLcIRceWK9"
    "BweLnB4eXJfrsK0i/jQParyf6yMVkiwZGNiSBG1e6p6AeguwX8Cgx+BWkSTWKyWRzEZo1j"
    "s8jz6IPtBka8SyAg3Zj0eUjjwMQf3gB6QHaPj6K/o8HnYKCMdouBYXG0O7CXa/z0luwzYl"
    "FueBFsBehR7OS2aOjgML+vumgihMYhNN7r0Djy1V0kC8Mufu86STZuUxNVSuKDR5HWiiPK"
    "rMRMQLpGegF/78efz68vrd9vLy+uPl2NbyTjYTkoG8q3l2fXULa9d4mexmEoOpOYGGxpTI"
    "M2WxytH6Vms61Muk2fbcsl2/jnONgm1ITiNKZ3+czdJ4oiHEX8kQz3K8qovqXjauncvrK0"
    "bZ+b1dSI7DyyQdUhiAtwM7zvvl/oMplZOQsKWbY6e7n7gYerLU4WCiZM5T0MHdgaFWDiCO"
    "4a0UGHJ2V2q5/oN6uftCjw9DlKAji5uFNyfVgUdorXM6DGsjFLr4FA0v6PQeq1MR2gKHqg"
    "oaF1t8X0LoxfiyXtuFHgoUfj86ayuN6xvXuBDqmnoFhffLOaDpWuZS2tPZYN5xRvV7gUFV"
    "6KHUP6H/4G0LdAxQ4Px01loV22iCeGASEJ1Dead69XPZfE3x1qSLKMApbLsuzhb1ihMPT7"
    "C7O43sQXdqaDH/B0gUw7dksgEN+nxJdhD89D5Jv2EpRhwPNTPC/3VNibfaVlic7iKjG9ov"
    "F5+MeQpt7TiS9QSr63jSzLQypMT67N4XqzADszQdpXLZt/Ja7/7Ki+RrMZ588xirKlMX17"
    "I+4+Qb1ky0w3SBjQC7n6Tk5PhfedBOsNq03vbOYkLtyI0fCx6hrk4LAW1dbCJd9cZlo7Lo"
    "MaCz13RbdAW4UWCzz/brjKgRgyrtLCZG2WVuyYeD7txM5w6E4XA0Wly2pkWFTrgrZzoNql"
    "YRmtrdrlGw4jw67qKUhzpQGN+S61lGKIH5UBw6vpPWT38KBMA1g+S5+JPci1gOWfyLDKNf"
    "zXp/GNrjR2A8mw7LhTZv3P8rh53UG2C8gVZIg767diZ3ddC3JoxEQz4vUNzvf9Mvvxf8EH"
    "2K4="
)
