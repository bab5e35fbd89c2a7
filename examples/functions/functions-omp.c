/* SPDX-License-Identifier: MIT */
/*
 * Automatic function regions in threads: an OpenMP team of 8 threads each
 * calls work() 1000 times, then two POSIX threads that exit long before the
 * program does call it 100 times each. Exact total: work 8200, worker 2.
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

double work(int i);
void *worker(void *arg);

static volatile double sink;

double work(int i)
{
	double x = i;
	for (int k = 0; k < 20; k++)
		x = x * 0.5 + k;
	sink = x;
	return x;
}

void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		work(i);
	return NULL;
}

int main(void)
{
	int team = 0;
#pragma omp parallel num_threads(8)
	{
#pragma omp single
		team = omp_get_num_threads();
		for (int i = 0; i < 1000; i++)
			work(i);
	}
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("functions-omp: team=%d\n", team);
	return team != 8;
}
