#!/usr/bin/env node
// Entry point of the `gatehouse` command: the CLI is TypeScript, run through tsx like the server.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
