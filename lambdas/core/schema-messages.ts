import { config } from 'zod/mini';
import english from 'zod/v4/locales/en.js';

/**
 * zod/mini ships without messages (every issue reads "Invalid input"). Loading the English
 * locale once keeps the messages classic zod gave, which reach clients, models and logs.
 * Import this module for its side effect wherever an issue's message is shown.
 */
config(english());
