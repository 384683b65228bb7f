/**
 * zod, set up once for every module that checks values with it: English messages, the only locale loaded.
 * Modules import this module as a namespace (`import * as z from './zod.js'`), which lets the bundler keep
 * only the parts they use (~45 kB instead of ~700 kB for the full build with every locale).
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
