// Opt in to React Router v7 behaviour now (silences the v6 deprecation warnings, eases the upgrade).
export const ROUTER_FUTURE = { v7_startTransition: true, v7_relativeSplatPath: true };
