/**
 * Between stored bytes and the objects one served group version answers (Kubernetes' storage codec
 * with its conversion to the request's version). Every group version of an object set reads and
 * writes the same keys; the bytes carry the storage version's apiVersion. A definition that is its
 * own storage version decodes and encodes as before, and a served version whose fields equal the
 * storage version's (the default) differs only in apiVersion, so its reads splice stored bytes too.
 */
import type { KubeObject } from '../../api/meta.js';
import type { KeyValue } from '../../storage/interface.js';
import { groupVersion, type Conversion, type ResourceDefinition } from '../definition.js';
import { decode, encode } from './meta.js';

/** The definition of another served version of the same objects, by its apiVersion (for bytes stored by an earlier storage version). */
export type Siblings = (def: ResourceDefinition, apiVersion: string) => ResourceDefinition | undefined;

const header = (apiVersion: string, kind: string): Buffer =>
  Buffer.from(`{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},"metadata":{`);

const startsWith = (value: Buffer, prefix: Buffer): boolean =>
  value.length > prefix.length && value.subarray(0, prefix.length).equals(prefix);

export class Codec {
  /** The apiVersion objects are answered in. */
  readonly served: string;
  /** The apiVersion the stored bytes carry. */
  readonly stored: string;
  private readonly conversion?: Conversion;
  private readonly servedHeader: Buffer;
  private readonly storedHeader: Buffer;

  constructor(
    private readonly def: ResourceDefinition,
    private readonly siblings?: Siblings,
  ) {
    this.served = groupVersion(def);
    this.stored = def.storedAs ? groupVersion(def.storedAs) : this.served;
    this.conversion = def.storedAs?.conversion;
    this.servedHeader = header(this.served, def.kind);
    this.storedHeader = this.stored === this.served ? this.servedHeader : header(this.stored, def.kind);
  }

  /** The stored object as the served version has it, with `revision` as its resourceVersion (and a custom resource's read defaults). */
  decode(kv: KeyValue, revision = kv.modRevision): KubeObject {
    const obj = decode(kv, revision);
    if (obj.apiVersion !== this.served) {
      if (obj.apiVersion !== this.stored) this.toStorageFrom(obj);
      this.conversion?.fromStorage(obj);
      obj.apiVersion = this.served;
    }
    this.def.custom?.onRead?.(obj);
    return obj;
  }

  /** Bytes stored by another version than the storage one (an earlier storage version): brought to the storage version. */
  private toStorageFrom(obj: KubeObject): void {
    const other = typeof obj.apiVersion === 'string' ? this.siblings?.(this.def, obj.apiVersion) : undefined;
    other?.storedAs?.conversion?.toStorage(obj);
    obj.apiVersion = this.stored;
  }

  /** The served version's object as the bytes to store (the object itself is left as it is). */
  encode(obj: KubeObject): Uint8Array {
    if (!this.conversion) return encode(obj, this.stored);
    const copy = structuredClone(obj);
    this.conversion.toStorage(copy);
    return encode(copy, this.stored);
  }

  /**
   * The object's compact JSON in the served version with `metadata.resourceVersion` spliced in, as
   * pieces to concatenate (a whole list is copied once). Without a conversion the stored bytes are
   * reused as they are, behind the served version's header; otherwise the object is converted.
   */
  spliced(kv: KeyValue): Uint8Array[] {
    const value = Buffer.from(kv.value.buffer, kv.value.byteOffset, kv.value.byteLength);
    // Read defaults make the answer differ from the stored bytes: those objects are decoded.
    const from = this.conversion || this.def.custom?.onRead ? undefined : startsWith(value, this.storedHeader) ? this.storedHeader : startsWith(value, this.servedHeader) ? this.servedHeader : undefined;
    if (!from) return [Buffer.from(JSON.stringify(this.decode(kv)))];
    const empty = value[from.length] === 0x7d;
    const rv = Buffer.from(`"resourceVersion":"${kv.modRevision}"${empty ? '' : ','}`);
    return [this.servedHeader, rv, value.subarray(from.length)];
  }
}
