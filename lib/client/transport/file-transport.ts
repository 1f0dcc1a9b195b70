// api_type FILESYSTEM: resources from files, no server. The protocol document's "Filesystem
// subscriptions": each file holds a DiscoveryResponse (here proto3 JSON or YAML) and is read
// again whenever it changes — an atomic rename into place included, which is how the document
// says to update one. The transport presents the files to the core as an ADS call: a request
// for a type makes the type's file be read and watched, and every read that finds new content
// is handed over as a DiscoveryResponse with a fresh nonce. The core's ACKs and NACKs go
// nowhere (there is no server to tell); a file that does not parse is reported through
// AdsCallHandlers.onRejected, so the client tells watchers, events and the dump as it would of
// a NACK, and keeps the last good version.
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { XdsServerConfig } from '../../bootstrap';
import { DEFAULT_REFRESH_DELAY_MS } from '../../bootstrap';
import { messageCodec } from '../../codec';
import { tracer } from '../../trace';
import type { AdsCall, AdsCallHandlers, XdsTransport } from './transport';

const trace = tracer('xds_file');
const requestCodec = messageCodec('envoy.service.discovery.v3.DiscoveryRequest');
const responseCodec = messageCodec('envoy.service.discovery.v3.DiscoveryResponse');
const RESPONSE_TYPE = 'envoy.service.discovery.v3.DiscoveryResponse';

export class FileTransport implements XdsTransport {
  private readonly calls = new Set<FileCall>();

  constructor(private readonly server: XdsServerConfig) {}

  startAdsCall(handlers: AdsCallHandlers): AdsCall {
    const call = new FileCall(this.server, handlers, () => this.calls.delete(call));
    this.calls.add(call);
    return call;
  }

  close(): void {
    for (const call of [...this.calls]) call.cancel();
  }
}

/** Per type: the file, what the core last asked for, and the last text read. */
interface TypeFile {
  readonly typeUrl: string;
  readonly path: string;
  names: string;
  /** The text of the last read (good or bad), so an unchanged file is not handed over again. */
  lastText: string | undefined;
  reading: boolean;
  readAgain: boolean;
  watcher: FSWatcher | undefined;
  poll: NodeJS.Timeout | undefined;
}

class FileCall implements AdsCall {
  private readonly files = new Map<string, TypeFile>();
  private ended = false;
  private nonce = 0;

  constructor(
    private readonly server: XdsServerConfig,
    private readonly handlers: AdsCallHandlers,
    private readonly onCancel: () => void,
  ) {}

  write(bytes: Uint8Array, onWritten: () => void): void {
    if (this.ended) return;
    const request = requestCodec.decode(bytes);
    // Nothing to send: the request has "reached the wire" at once (its timers start now).
    queueMicrotask(() => {
      if (!this.ended) onWritten();
    });
    // ACKs and NACKs (a nonce) have no one to go to; a new name list may need the file again.
    const path = this.server.paths?.get(request.typeUrl);
    if (path === undefined) return; // no file for the type: its timers decide
    const names = request.resourceNames.join('\n');
    const file = this.files.get(request.typeUrl);
    if (!file) {
      this.watchFile(request.typeUrl, path, names);
    } else if (file.names !== names) {
      // New names: the same file again, so that they are looked up in it (SotW).
      file.names = names;
      file.lastText = undefined;
      this.read(file);
    }
  }

  cancel(): void {
    if (this.ended) return;
    this.ended = true;
    for (const file of this.files.values()) {
      file.watcher?.close();
      clearInterval(file.poll);
    }
    this.files.clear();
    this.onCancel();
  }

  private watchFile(typeUrl: string, path: string, names: string): void {
    const file: TypeFile = {
      typeUrl,
      path,
      names,
      lastText: undefined,
      reading: false,
      readAgain: false,
      watcher: undefined,
      poll: undefined,
    };
    this.files.set(typeUrl, file);
    // The directory, not the file: a rename into place replaces the file's inode, and a watch
    // on the old one would hear nothing more.
    try {
      const name = basename(path);
      file.watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name) this.read(file);
      });
      file.watcher.on('error', () => {
        file.watcher?.close();
        file.watcher = undefined; // the poll still runs
      });
    } catch {
      // No such directory yet, or no watch support: the poll finds the file when it comes.
    }
    // The poll catches what a watch misses (network file systems, a directory made later).
    file.poll = setInterval(
      () => this.read(file),
      this.server.refreshDelayMs ?? DEFAULT_REFRESH_DELAY_MS,
    );
    file.poll.unref();
    this.read(file);
  }

  /** Reads the file and hands over what changed; one read at a time per file. */
  private read(file: TypeFile): void {
    if (this.ended) return;
    if (file.reading) {
      file.readAgain = true;
      return;
    }
    file.reading = true;
    void readFile(file.path, 'utf8')
      .then(
        (text) => this.loaded(file, text),
        (e: NodeJS.ErrnoException) =>
          this.failed(file, `\0${e.code}`, `cannot read: ${e.code ?? e.message}`),
      )
      .finally(() => {
        file.reading = false;
        if (file.readAgain && !this.ended) {
          file.readAgain = false;
          this.read(file);
        }
      });
  }

  private loaded(file: TypeFile, text: string): void {
    if (this.ended || text === file.lastText) return;
    let bytes: Uint8Array;
    try {
      bytes = this.toResponse(file, text);
    } catch (e) {
      this.failed(file, text, e instanceof Error ? e.message : String(e));
      return;
    }
    file.lastText = text;
    if (trace.enabled) trace.log(`${file.path}: new content for ${file.typeUrl}`);
    this.handlers.onMessage(bytes);
  }

  private failed(file: TypeFile, seen: string, message: string): void {
    if (this.ended || seen === file.lastText) return;
    file.lastText = seen;
    if (trace.enabled) trace.log(`${file.path}: ${message}`);
    this.handlers.onRejected?.(file.typeUrl, `file ${file.path}: ${message}`);
  }

  /** The file's DiscoveryResponse, with the type URL checked and a nonce of this read. */
  private toResponse(file: TypeFile, text: string): Uint8Array {
    // Loaded on first use, as the codec is: importing the package reads no YAML.
    const { parse } = require('yaml') as typeof import('yaml');
    const { toMessageBytes } = require('../../proto-json') as typeof import('../../proto-json');
    // YAML 1.2 is a superset of JSON: one parser reads both.
    const json: unknown = parse(text);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw new Error('expected a DiscoveryResponse object');
    }
    const response = responseCodec.decode(toMessageBytes(RESPONSE_TYPE, json));
    if (response.typeUrl !== '' && response.typeUrl !== file.typeUrl) {
      throw new Error(`type_url: expected ${file.typeUrl}, got ${response.typeUrl}`);
    }
    return responseCodec.encode({
      ...response,
      // A file without version_info gets one from its content, so the dump tells edits apart.
      versionInfo: response.versionInfo || contentVersion(text),
      typeUrl: file.typeUrl,
      nonce: String(++this.nonce),
    });
  }
}

function contentVersion(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
}
