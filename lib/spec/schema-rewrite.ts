/**
 * A copy of a spec schema for another reader: every `#/definitions/<name>` reference pointed where that reader
 * finds the shared schemas, and each object schema passed through `node` once its own parts are rewritten.
 */
export function rewriteSchema(
    value: unknown,
    definitionsAt: string,
    node: (schema: Record<string, unknown>) => Record<string, unknown> = (schema) => schema,
): unknown {
    if (Array.isArray(value)) {
        return value.map((inner) => rewriteSchema(inner, definitionsAt, node));
    }

    if (!value || typeof value !== 'object') {
        return value;
    }

    const schema = Object.fromEntries(
        Object.entries(value).map(([key, inner]) => [
            key,
            key === '$ref' && typeof inner === 'string'
                ? inner.replace(/^#\/definitions\//, definitionsAt)
                : rewriteSchema(inner, definitionsAt, node),
        ]),
    );
    return node(schema);
}
