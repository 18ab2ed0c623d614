#include <stdio.h>
int main(void){puts("unit: 0 passed, 0 failed");return 0;}
