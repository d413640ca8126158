// The library's version, recorded in `run.started` so a replay knows which code made a session (a test keeps it equal to package.json).
/** This library's version (package.json `version`). */
export const LIBRARY_VERSION = '0.1.0';
