export type PathSegment = string | number;

/** Finds the line of a value in the source text, when there is one. */
export type LineOf = (path: PathSegment[]) => number | undefined;

/** `services.web.ports[0]`, `services.web.labels["traefik.enable"]`. */
export function formatPath(path: readonly PathSegment[]): string {
    return path
        .map((segment, index) => {
            if (typeof segment === 'number') {
                return `[${segment}]`;
            }

            if (/^[\w-]+$/.test(segment)) {
                return index === 0 ? segment : `.${segment}`;
            }

            return `[${JSON.stringify(segment)}]`;
        })
        .join('');
}
