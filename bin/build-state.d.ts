export const DIST_DIR: string;
export const BUILD_STAMP: string;
export function isBuilt(): boolean;
export function isBuildFresh(): boolean;
