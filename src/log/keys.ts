// LevelDB's key encoding: one key range per session, events sorted by fixed-width seq.
//
// A session id is written as 4 hex digits per UTF-16 code unit, so any non-empty JS string
// (separators, NUL, '/', '..', lone surrogates) maps to a distinct key part containing no '\x00',
// and no session's range can contain another's.

import { decodeSessionId, encodeSessionId } from './session-key.js';

export { MAX_SEQ, decodeSessionId, encodeSessionId } from './session-key.js';

const SEP = '\x00';
const SEQ_WIDTH = 16;

export const encodeSeq = (seq: number): string => seq.toString().padStart(SEQ_WIDTH, '0');

const eventPrefix = (sessionId: string): string => `e${SEP}${encodeSessionId(sessionId)}${SEP}`;
const checkpointPrefix = (sessionId: string): string => `c${SEP}${encodeSessionId(sessionId)}${SEP}`;

export const eventKey = (sessionId: string, seq: number): string => eventPrefix(sessionId) + encodeSeq(seq);
export const headKey = (sessionId: string): string => `h${SEP}${encodeSessionId(sessionId)}`;
export const checkpointKey = (sessionId: string, seq: number): string => checkpointPrefix(sessionId) + encodeSeq(seq);

/** Key bounds for seqs `from..to` of one session (inclusive). */
export const eventRange = (sessionId: string, fromSeq: number, toSeq: number): { gte: string; lte: string } => ({
  gte: eventKey(sessionId, fromSeq),
  lte: eventKey(sessionId, toSeq),
});

export const checkpointRange = (sessionId: string): { gte: string; lt: string } => {
  const prefix = checkpointPrefix(sessionId);
  return { gte: prefix, lt: `${prefix}:` };
};

export const headRange = { gte: `h${SEP}`, lt: `h\x01` };

export const sessionIdOfHeadKey = (key: string): string => decodeSessionId(key.slice(2));

export const seqOfKey = (key: string): number => Number(key.slice(key.length - SEQ_WIDTH));
