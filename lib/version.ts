/** This package's version, sent as the xDS node's user_agent_version (a spec keeps it true). */
export const VERSION = '0.1.0';
