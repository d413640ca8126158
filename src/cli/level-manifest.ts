// Reads a LevelDB MANIFEST (a log of version edits): which table files are live, and from which write-ahead log on
// recovery must replay. The snapshot copy links only those tables, never a table the writer is still writing.
//
// Formats, from LevelDB's doc/log_format.md and db/version_edit.cc: the file is 32 KiB blocks of records, each with a
// 7-byte header (crc32c 4, length 2 little-endian, type 1: 1 full, 2 first, 3 middle, 4 last; 0 padding); a block
// tail shorter than a header is zeros. A record is one VersionEdit: tagged fields, tags and numbers as varints.

const BLOCK_SIZE = 32_768;
const HEADER_SIZE = 7;

const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

const TAG = {
  comparator: 1,
  logNumber: 2,
  nextFileNumber: 3,
  lastSequence: 4,
  compactPointer: 5,
  deletedFile: 6,
  newFile: 7,
  prevLogNumber: 9,
} as const;

export interface LevelManifest {
  /** The numbers of the table files the database's current version holds. */
  readonly liveTables: ReadonlySet<number>;
  /** Write-ahead logs numbered at or above this hold what the tables do not (0: none recorded). */
  readonly logNumber: number;
  /** An older log still to replay (0: none). */
  readonly prevLogNumber: number;
  /** The next file number the database will give out (every file it has written is numbered below it). */
  readonly nextFileNumber: number;
  /** How many bytes of the manifest hold whole records: a copy cut there is what the database itself would read. */
  readonly wholeBytes: number;
}

/** The manifest is not one this reader understands (a copy of it would not be a consistent snapshot). */
export class ManifestFormatError extends Error {
  constructor(message: string) {
    super(`cannot read the LevelDB manifest: ${message}`);
    this.name = 'ManifestFormatError';
  }
}

/** The records of a log file, each whole (fragments joined); a torn last record is left out. */
const recordsOf = (bytes: Uint8Array): { records: Uint8Array[]; wholeBytes: number } => {
  const records: Uint8Array[] = [];
  let pending: Uint8Array[] | undefined;
  let offset = 0;
  let wholeBytes = 0;
  while (offset < bytes.length) {
    const left = BLOCK_SIZE - (offset % BLOCK_SIZE);
    if (left < HEADER_SIZE) {
      offset += left; // a block's trailer
      continue;
    }
    if (offset + HEADER_SIZE > bytes.length) break; // torn header
    const length = (bytes[offset + 4] as number) | ((bytes[offset + 5] as number) << 8);
    const type = bytes[offset + 6] as number;
    const start = offset + HEADER_SIZE;
    if (start + length > bytes.length) break; // torn payload
    if (type === 0 && length === 0) {
      offset = offset + left; // preallocated zeros: the rest of the block
      continue;
    }
    const payload = bytes.subarray(start, start + length);
    offset = start + length;
    if (type === FULL) {
      records.push(payload);
      pending = undefined;
      wholeBytes = offset;
    } else if (type === FIRST) {
      pending = [payload];
    } else if (type === MIDDLE) {
      if (!pending) throw new ManifestFormatError(`a middle fragment without a first at byte ${start - HEADER_SIZE}`);
      pending.push(payload);
    } else if (type === LAST) {
      if (!pending) throw new ManifestFormatError(`a last fragment without a first at byte ${start - HEADER_SIZE}`);
      pending.push(payload);
      records.push(Buffer.concat(pending));
      pending = undefined;
      wholeBytes = offset;
    } else {
      throw new ManifestFormatError(`record type ${type} at byte ${start - HEADER_SIZE}`);
    }
  }
  return { records, wholeBytes };
};

/** Reads varints and length-prefixed slices of one record. */
const reader = (bytes: Uint8Array) => {
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (let shift = 0; shift < 64; shift += 7) {
      if (at >= bytes.length) throw new ManifestFormatError('a varint runs past its record');
      const byte = bytes[at++] as number;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new ManifestFormatError('a varint longer than 10 bytes');
  };
  const skipSlice = (): void => {
    const length = varint();
    if (at + length > bytes.length) throw new ManifestFormatError('a slice runs past its record');
    at += length;
  };
  return { varint, skipSlice, done: () => at >= bytes.length };
};

/**
 * Parses a MANIFEST's bytes (as read, possibly while the database appends to it).
 * @example const { liveTables, logNumber } = parseLevelManifest(await readFile(join(dir, manifestName)))
 */
export const parseLevelManifest = (bytes: Uint8Array): LevelManifest => {
  const { records, wholeBytes } = recordsOf(bytes);
  const live = new Set<number>();
  let logNumber = 0;
  let prevLogNumber = 0;
  let nextFileNumber = 0;
  for (const record of records) {
    const r = reader(record);
    while (!r.done()) {
      const tag = r.varint();
      switch (tag) {
        case TAG.comparator:
          r.skipSlice();
          break;
        case TAG.logNumber:
          logNumber = r.varint();
          break;
        case TAG.prevLogNumber:
          prevLogNumber = r.varint();
          break;
        case TAG.nextFileNumber:
          nextFileNumber = r.varint();
          break;
        case TAG.lastSequence:
          r.varint();
          break;
        case TAG.compactPointer:
          r.varint();
          r.skipSlice();
          break;
        case TAG.deletedFile:
          r.varint();
          live.delete(r.varint());
          break;
        case TAG.newFile: {
          r.varint();
          const number = r.varint();
          r.varint(); // file size
          r.skipSlice(); // smallest key
          r.skipSlice(); // largest key
          live.add(number);
          break;
        }
        default:
          throw new ManifestFormatError(`unknown version edit tag ${tag}`);
      }
    }
  }
  if (records.length === 0) throw new ManifestFormatError('no whole record');
  return { liveTables: live, logNumber, prevLogNumber, nextFileNumber, wholeBytes };
};

/** The number in a LevelDB file name (`000042.ldb`, `000041.log`, `MANIFEST-000009`), or undefined. */
export const fileNumberOf = (name: string): number | undefined => {
  const match = /^(\d+)\.(ldb|sst|log)$/.exec(name) ?? /^MANIFEST-(\d+)$/.exec(name);
  return match ? Number(match[1]) : undefined;
};
