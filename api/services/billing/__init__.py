"""Billing: prices, pre-charge and settlement, reservations, balances, payments, redemptions."""
