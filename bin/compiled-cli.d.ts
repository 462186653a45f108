/** Types of compiled-cli.js, for the build script and the tests. */
export declare const COMPILED_CLI_DIR: string;
export declare const COMPILED_CLI_ENTRY: string;
export declare function recordBuild(sources: string[]): void;
export declare function outdatedBecause(): string | null;
