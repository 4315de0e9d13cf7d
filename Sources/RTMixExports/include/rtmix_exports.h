/* Empty: see exports.c. */
