import YAML from 'yaml';

import { loadConfig } from '../lib/config.ts';
import { lintCompose, lintContextFor, parseCompose, renderCompose } from '../plugins/deploy/domain/compose/compose-model.ts';
import { type BenchFigure, LOAD_SECONDS } from './harness.ts';

const SERVICES = 20;
const MAX_ITERATIONS = 20_000;
const TARGET_RATIO = 3;

/** A compose file of 20 services written the way self-hosted stacks are: env, ports, volumes, healthchecks, labels. */
function twentyServiceFile(): string {
    const services = Array.from({ length: SERVICES }, (_, index) => {
        const name = `service${index + 1}`;
        return `  ${name}:
    image: ghcr.io/example/${name}:1.${index}.0
    restart: unless-stopped
    environment:
      - TZ=UTC
      - DATABASE_URL=postgres://app:\${DB_PASSWORD}@db/${name}
      - LOG_LEVEL=info
    ports:
      - "127.0.0.1:${8000 + index}:80"
    volumes:
      - ${name}-data:/data
      - ./config/${name}:/config:ro
    healthcheck:
      test: ["CMD", "wget", "-qO-", "http://localhost/health"]
      interval: 30s
      timeout: 5s
      retries: 3
    depends_on:
      ${index === 0 ? 'db' : 'service1'}:
        condition: service_${index === 0 ? 'started' : 'healthy'}
    labels:
      com.example.app: ${name}
    logging:
      driver: json-file
      options:
        max-size: 10m
`;
    });
    const volumes = Array.from({ length: SERVICES }, (_, index) => `  service${index + 1}-data:\n`).join('');
    return `services:\n${services.join('')}  db:\n    image: postgres:16.2\nvolumes:\n${volumes}`;
}

/** Median milliseconds per call of `work`, over a loop bounded by BENCH_SECONDS and MAX_ITERATIONS. */
function medianMilliseconds(work: () => void): { median: number; iterations: number } {
    for (let warmUp = 0; warmUp < 20; warmUp += 1) {
        work();
    }

    const times: number[] = [];
    const deadline = process.hrtime.bigint() + BigInt(LOAD_SECONDS * 1e9);
    while (times.length < MAX_ITERATIONS && process.hrtime.bigint() < deadline) {
        const start = process.hrtime.bigint();
        work();
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }

    times.sort((a, b) => a - b);
    return { median: times[Math.floor(times.length / 2)] ?? Number.NaN, iterations: times.length };
}

/** Parse + lint + render of a 20-service compose file, against parsing and writing the same YAML alone. */
export async function benchCompose(): Promise<BenchFigure> {
    const text = twentyServiceFile();
    const context = lintContextFor(loadConfig({}), { app: 'bench' });
    const model = medianMilliseconds(() => {
        const spec = parseCompose(text);
        lintCompose(spec, context);
        renderCompose(spec);
    });
    const yamlOnly = medianMilliseconds(() => {
        YAML.stringify(YAML.parse(text));
    });
    const ratio = model.median / yamlOnly.median;
    return await Promise.resolve({
        name: 'compose parse + lint + render, 20 services',
        measured: `${model.median.toFixed(3)} ms median per iteration (${model.iterations} iterations)`,
        baseline: `${yamlOnly.median.toFixed(3)} ms median for YAML.parse + YAML.stringify of the same file (${yamlOnly.iterations} iterations)`,
        ratio,
        target: `<= ${TARGET_RATIO}`,
        met: ratio <= TARGET_RATIO,
        notes: `${Buffer.byteLength(text)} bytes, ${SERVICES + 1} services; in-process`,
    });
}
