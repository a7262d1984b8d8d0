/** The path of the committed types, relative to the repository. */
export declare const CLIENT_TYPES_FILE: string;
/** The document without its documentation text. */
export declare function withoutProse<T>(doc: T): T;
/** The text of client/api.d.ts for an OpenAPI document. */
export declare function clientTypes(doc: unknown): Promise<string>;
